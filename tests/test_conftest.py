"""The test session's own setup (conftest.py), run as a session of its own."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")


def test_a_session_removes_its_private_cache_when_it_ends(tmp_path):
    """Each session ports and checks with a cache of its own (about 8 MB for the whole suite),
    never the user's; kept after the session, every run left one more in the temp folder."""
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_inner.py").write_text(
        "import os\n"
        "def test_the_cache_is_private_and_there():\n"
        "    folder = os.environ['HIPPORT_CACHE_DIR']\n"
        "    assert os.path.isdir(folder) and os.path.basename(folder).startswith('hipport-cache-')\n")
    temp = tmp_path / "temp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp))
    env.pop("HIPPORT_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert list(temp.iterdir()) == []
