"""report.html in a real browser: headless Chromium loads it from disk, runs its script, logs no
console message, and asks the network for nothing.

How the browser is watched: `--enable-logging=stderr` prints every console message as a
`CONSOLE` line; every request the browser makes goes to a proxy that only records it (nothing
leaves the machine). A control page with a console.error and a remote image first proves that
both channels see what they should, so a silent run means a clean page, not a deaf harness.

Skipped where Chromium is not installed (`.ci/run` installs Debian's `chromium`); set
HIPPORT_CHROMIUM to use another binary.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from hipport.config import Settings
from hipport.report import model

REPO = Path(__file__).resolve().parents[1]
PROJECT = REPO / "fixtures" / "projects" / "nbody_lite"

# Browser services Chromium calls by itself even with background networking off (component
# updates, sign-in, network time). Requests for these hosts are the browser's, never a page's.
BROWSER_SERVICE_HOSTS = frozenset({
    "update.googleapis.com", "accounts.google.com", "clients2.google.com", "clients1.google.com",
    "clientservices.googleapis.com", "optimizationguide-pa.googleapis.com", "redirector.gvt1.com",
    "edgedl.me.gvt1.com", "safebrowsing.googleapis.com", "content-autofill.googleapis.com",
    "android.clients.google.com", "www.gstatic.com", "www.google.com",
})


def chromium() -> str | None:
    for candidate in (os.environ.get("HIPPORT_CHROMIUM"), shutil.which("chromium"),
                      shutil.which("chromium-browser"), "/usr/bin/chromium"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


BROWSER = chromium()
pytestmark = pytest.mark.skipif(BROWSER is None, reason="chromium is not installed (apt-get install chromium)")


class Recorder:
    """A 'proxy' that accepts connections, records each request line, and answers nothing."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.requests: list[str] = []
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
                except OSError:
                    first = "?"
                self.requests.append(first)

    def page_requests(self) -> list[str]:
        return [line for line in self.requests if _host(line) not in BROWSER_SERVICE_HOSTS]

    def close(self):
        self._stop = True
        self.sock.close()


def _host(request_line: str) -> str:
    """`GET http://h:80/x HTTP/1.1` or `CONNECT h:443 HTTP/1.1` -> `h`."""
    parts = request_line.split()
    target = parts[1] if len(parts) > 1 else ""
    if "://" in target:
        target = target.split("://", 1)[1]
    hostport = target.split("/", 1)[0]
    return hostport.rsplit(":", 1)[0] if ":" in hostport else hostport


def load(page: Path, profile: Path, proxy: Recorder) -> tuple[str, list[str]]:
    """Chromium's DOM after load (--dump-dom) and its console lines."""
    args = [
        BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
        "--disable-default-apps", "--disable-domain-reliability", "--no-pings",
        f"--user-data-dir={profile}", f"--proxy-server=http://127.0.0.1:{proxy.port}",
        "--proxy-bypass-list=<-loopback>", "--enable-logging=stderr", "--v=0",
        "--dump-dom", page.as_uri(),
    ]
    done = subprocess.run(args, capture_output=True, timeout=120, text=True, errors="replace")
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console


@pytest.fixture
def proxy():
    p = Recorder()
    yield p
    p.close()


def test_the_harness_sees_console_messages_and_requests(tmp_path, proxy):
    control = tmp_path / "control.html"
    control.write_text('<!DOCTYPE html><html><body><p id="x">control</p>'
                       '<img src="http://page-request.invalid/probe.png">'
                       '<script>console.error("probe-console-7");</script></body></html>', encoding="utf-8")
    dom, console = load(control, tmp_path / "profile", proxy)
    assert 'id="x"' in dom
    assert any("probe-console-7" in line for line in console), console
    for _ in range(50):  # the request may land just after the DOM is dumped
        if any("page-request.invalid" in r for r in proxy.requests):
            break
        threading.Event().wait(0.1)
    assert any("page-request.invalid" in r for r in proxy.page_requests()), proxy.requests


def test_report_html_renders_offline_without_errors(tmp_path, proxy):
    report = model.from_paths([PROJECT], Settings(jobs=1), progress=False)
    rep = tmp_path / "rep"
    model.write(report, rep, root=PROJECT)
    dom, console = load(rep / "report.html", tmp_path / "profile", proxy)
    threading.Event().wait(0.5)
    # The page's script ran to its end: it marks <html> with the number of sortable tables.
    assert 'data-rendered="' in dom and 'data-rendered="0"' not in dom
    assert "Migration report: nbody_lite" in dom
    assert 'tabindex="0"' in dom  # the script made the table headers sortable
    # The fixture's `<script>` comment stayed text: escaped in the DOM, never an element.
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert dom.count("<script>") == 1
    assert console == [], console
    assert proxy.page_requests() == [], proxy.requests


def test_report_html_screenshot_is_drawn(tmp_path, proxy):
    report = model.from_paths([PROJECT], Settings(jobs=1), progress=False)
    rep = tmp_path / "rep"
    model.write(report, rep, root=PROJECT)
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
         f"--user-data-dir={tmp_path / 'profile'}", f"--proxy-server=http://127.0.0.1:{proxy.port}",
         "--window-size=1200,1600", f"--screenshot={shot}", (rep / "report.html").as_uri()],
        capture_output=True, timeout=120, text=True, errors="replace", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20_000  # a page with content, not a blank one
