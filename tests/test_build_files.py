"""Build-file rewriters (CMake, setup.py, Makefiles, Dockerfiles, requirements, shell scripts)
and their tables (mappings/build_files/*.tsv): tables of (input, expected) per kind, inputs that
must come back unchanged, comments and strings left alone, CRLF/BOM, notes for what is left."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hipport.cli import main
from hipport.config import Settings
from hipport.pipeline import port_source
from hipport.rewrite import shell

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "mappings" / "build_files"
NAMES = {"cmake": "CMakeLists.txt", "setup.py": "setup.py", "make": "Makefile", "docker": "Dockerfile",
         "requirements": "requirements.txt", "shell": "build.sh"}


def port(kind: str, text: str | bytes, s: Settings = Settings(), renamed: frozenset[str] = frozenset(),
         target=None):
    data = text.encode() if isinstance(text, str) else text
    if target is not None:
        s = s._replace(target_hip=target)
    ported = port_source(data, NAMES[kind], kind, s, renamed)
    assert ported.result.status in ("ported", "unchanged"), ported.result
    again = port_source(ported.data, NAMES[kind], kind, s, renamed)
    assert again.data == ported.data, "porting twice must change nothing"
    return ported


def out(kind: str, text: str, **kw) -> str:
    return port(kind, text, **kw).data.decode()


# ---------------------------------------------------------------------------------------------
# the tables

TABLE_FILES = sorted(TABLES.glob("*.tsv"))
ENUMS = {
    ("nvcc_flags", "value"): {"", "any", "nvarch"},
    ("nvcc_flags", "action"): {"replace", "drop", "arch", "unwrap"},
    ("cmake", "kind"): {"language", "variable", "property", "arch", "package", "command", "text"},
    ("tools", "kind"): {"tool", "smi", "note", "path", "env", "arch-env"},
    ("torch_headers", "match"): {"exact", "prefix"},
    ("wheels", "kind"): {"index", "local-version"},
    ("archs", "default"): {"", "1"},
}
KEYS = {"nvcc_flags": ("flag",), "libraries": ("cuda",), "cmake": ("cuda", "kind"), "tools": ("cuda",),
        "archs": ("arch",), "torch_headers": ("cuda",), "torch_names": ("cuda",), "wheels": ("cuda",)}
UNSORTED = {"docker_images", "wheels"}  # rows in match order


def test_all_tables_are_known():
    assert {p.stem for p in TABLE_FILES} == set(KEYS) | {"docker_images"}


@pytest.mark.parametrize("path", TABLE_FILES, ids=lambda p: p.name)
def test_table_format(path: Path):
    text = path.read_bytes().decode("utf-8")
    assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text
    lines = text[:-1].split("\n")
    assert lines[0].startswith("# hand-written:"), "first line says what the table is"
    assert not any(line.startswith("#") for line in lines[1:])
    header = lines[1].split("\t")
    rows = [line.split("\t") for line in lines[2:]]
    assert rows
    for row in rows:
        assert len(row) == len(header), row
        assert all(cell == cell.strip() and "  " not in cell for cell in row), row
    table = shell.table(path.stem)
    for (name, column), allowed in ENUMS.items():
        if name == path.stem:
            assert {r[column] for r in table} <= allowed
    if path.stem in KEYS:
        keys = [tuple(r[k] for k in KEYS[path.stem]) for r in table]
        assert len(set(keys)) == len(keys), "a key is listed twice"
        if path.stem not in UNSORTED:
            assert keys == sorted(keys, key=lambda k: tuple(x.encode() for x in k)), "rows sorted by key"


def test_tables_cross_check():
    flags = shell.flag_rules()
    assert all(r.hip for r in flags.values() if r.action == "replace")
    assert all(not r.hip for r in flags.values() if r.action != "replace")
    assert all(r.value for r in flags.values() if r.action in ("arch", "unwrap"))
    assert shell.default_archs() == ("gfx90a", "gfx942")
    for r in shell.table("libraries"):
        assert all(t.startswith("CUDA::") for t in r["cuda_targets"].split())
        assert bool(r["package"]) == bool(r["target"])
    for r in shell.table("docker_images"):
        assert r["rocm"].startswith("rocm/")


def test_libraries_follow_the_target():
    assert shell.libraries((6, 3))["nvrtc"].hip == "hiprtc"
    assert shell.libraries((5, 2))["nvrtc"].hip == "amdhip64"  # HIP 5.2: hipRTC is in libamdhip64
    assert "cublasLt" not in shell.libraries((5, 2))  # hipBLASLt came with ROCm 5.5
    assert shell.libraries((6, 3))["CUDA::cublas_static"].target == "roc::hipblas"


# ---------------------------------------------------------------------------------------------
# CMake

CMAKE_CASES = [
    ("project(p LANGUAGES CXX CUDA)\n", "project(p LANGUAGES CXX HIP)\n"),
    ("project(p CUDA CXX)\n", "project(p HIP CXX)\n"),
    ("enable_language(CUDA)\n", "enable_language(HIP)\n"),
    ("set(CMAKE_CUDA_STANDARD 17)\n", "set(CMAKE_HIP_STANDARD 17)\n"),
    ("set(CMAKE_CUDA_ARCHITECTURES 70 80)\n", "set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942)\n"),
    ('set(CMAKE_CUDA_ARCHITECTURES "75;86")\n', 'set(CMAKE_HIP_ARCHITECTURES "gfx90a;gfx942")\n'),
    ("set(CMAKE_CUDA_ARCHITECTURES native CACHE STRING x)\n",
     "set(CMAKE_HIP_ARCHITECTURES gfx90a gfx942 CACHE STRING x)\n"),
    ("set_target_properties(t PROPERTIES CUDA_ARCHITECTURES 80 CUDA_STANDARD 17)\n",
     "set_target_properties(t PROPERTIES HIP_ARCHITECTURES gfx90a gfx942 HIP_STANDARD 17)\n"),
    ("target_link_libraries(t PRIVATE CUDA::cufft)\n",
     "find_package(hipfft REQUIRED)\ntarget_link_libraries(t PRIVATE hip::hipfft)\n"),
    ("find_package(CUDAToolkit REQUIRED)\ntarget_link_libraries(t CUDA::cudart CUDA::cusolver)\n",
     "find_package(hip REQUIRED)\nfind_package(hipsolver REQUIRED)\ntarget_link_libraries(t hip::host roc::hipsolver)\n"),
    ("  find_package(CUDAToolkit QUIET)\n  target_link_libraries(t CUDA::curand)\n",
     "  find_package(hip QUIET)\n  find_package(hiprand QUIET)\n  target_link_libraries(t hip::hiprand)\n"),
    ("add_library(k k.cu k.cpp)\n", "add_library(k k.cu k.cpp)\nset_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"),
    ("file(GLOB KS src/*.cu)\n", "file(GLOB KS src/*.cu)\nset_source_files_properties(${KS} PROPERTIES LANGUAGE HIP)\n"),
    ("target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--use_fast_math>)\n",
     "target_compile_options(t PRIVATE $<$<COMPILE_LANGUAGE:HIP>:-ffast-math>)\n"),
    ('target_compile_options(t PRIVATE "$<$<COMPILE_LANGUAGE:CXX,CUDA>:-O3;-lineinfo>")\n',
     'target_compile_options(t PRIVATE "$<$<COMPILE_LANGUAGE:CXX,HIP>:-O3>")\n'),
    ('set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -Xptxas -v -gencode arch=compute_80,code=sm_80 -O2")\n',
     'set(CMAKE_HIP_FLAGS "${CMAKE_HIP_FLAGS} -O2")\n'),
    ("set_source_files_properties(a.cpp PROPERTIES LANGUAGE CUDA)\n",
     "set_source_files_properties(a.cpp PROPERTIES LANGUAGE HIP)\n"),
    ("cmake_minimum_required(VERSION 3.10)\nproject(p CUDA)\n", "cmake_minimum_required(VERSION 3.21)\nproject(p HIP)\n"),
    ("cuda_add_executable(app main.cu)\n",
     "add_executable(app main.cu)\nset_source_files_properties(main.cu PROPERTIES LANGUAGE HIP)\n"),
    ("target_link_libraries(app cublas -lcurand)\n", "target_link_libraries(app hipblas -lhiprand)\n"),
    ("include_directories(/usr/local/cuda/include)\n", "include_directories(/opt/rocm/include)\n"),
    # names right after `-D` count as much as whole words
    ("execute_process(COMMAND cmake -DCMAKE_CUDA_ARCHITECTURES=80 -DCUDA_STANDARD=17 ..)\n",
     "execute_process(COMMAND cmake -DCMAKE_HIP_ARCHITECTURES=80 -DHIP_STANDARD=17 ..)\n"),
    # `#` ends an unquoted argument and opens a comment, even with no space before it
    ("add_library(k k.cu# CUDA::cublas, in a comment\n)\n",
     "add_library(k k.cu# CUDA::cublas, in a comment\n)\nset_source_files_properties(k.cu PROPERTIES LANGUAGE HIP)\n"),
]

CMAKE_UNCHANGED = [
    "# project(p CUDA) and CUDA::cublas in a comment\nproject(p CXX)\n",
    "#[[ bracket comment: enable_language(CUDA) -lineinfo ]]\n",
    'message(STATUS "CUDA found")\n',
    "set(MY_CUDA_ARCHITECTURES 80)\n",  # a user's variable
    "project(cuda_tools CXX)\n",
    "set(CMAKE_CUDA_ARCHITECTURES OFF)\n".replace("CMAKE_CUDA_ARCHITECTURES", "CMAKE_CXX_STANDARD"),
    "target_link_libraries(t PRIVATE mylib::CUDA_helpers)\n",
    "target_link_libraries(t PRIVATE lib::CUDA::cublas)\n",  # not CMake's CUDA:: namespace
    "set(XCUDA_STANDARD 1)\nset(CMAKE_CUDA_STANDARDX 1)\nset(-XCUDA_STANDARD 1)\n",  # longer words
    "cmake_minimum_required(VERSION 3.10)\nproject(p CXX)\n",  # no HIP language: no bump
]


@pytest.mark.parametrize("src,expected", CMAKE_CASES)
def test_cmake(src, expected):
    assert out("cmake", src) == expected


@pytest.mark.parametrize("src", CMAKE_UNCHANGED)
def test_cmake_unchanged(src):
    assert out("cmake", src) == src


def test_cmake_rename_and_crlf():
    src = "add_library(k src/k.cu)\r\nfile(GLOB G *.cu)\r\n"
    assert out("cmake", src, s=Settings(rename=True)) == "add_library(k src/k.hip)\r\nfile(GLOB G *.hip)\r\n"
    # Inserted lines take the file's line ending and the command's indentation.
    crlf = "  find_package(CUDAToolkit REQUIRED)\r\n  target_link_libraries(t CUDA::cublas)\r\n"
    assert out("cmake", crlf) == ("  find_package(hip REQUIRED)\r\n  find_package(hipblas REQUIRED)\r\n"
                                  "  target_link_libraries(t roc::hipblas)\r\n")


def test_cmake_notes():
    ported = port("cmake", "set_target_properties(t PROPERTIES CUDA_SEPARABLE_COMPILATION ON)\n"
                           "target_link_libraries(t CUDA::cudadevrt)\nset(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)\n")
    notes = "\n".join(ported.result.notes)
    assert "CUDA_SEPARABLE_COMPILATION` left as written" in notes and "-fgpu-rdc" in notes
    assert "CUDA::cudadevrt` left as written" in notes
    assert "not with nvcc or hipcc" in notes
    assert ported.data.count(b"CUDA_SEPARABLE_COMPILATION") == 1


# ---------------------------------------------------------------------------------------------
# setup.py

SETUP_CASES = [
    ('CUDAExtension("m", ["a.cu"], libraries=["cublas", "curand", "m"])\n',
     'CUDAExtension("m", ["a.cu"], libraries=["hipblas", "hiprand", "m"])\n'),
    ("CUDAExtension('m', ['a.cu'], extra_compile_args={'nvcc': ['-O3', '--use_fast_math']})\n",
     "CUDAExtension('m', ['a.cu'], extra_compile_args={'nvcc': ['-O3', '-ffast-math']})\n"),
    ('x = CUDAExtension("m", [], extra_compile_args={"nvcc": ["-O3", "-lineinfo"]})\n',
     'x = CUDAExtension("m", [], extra_compile_args={"nvcc": ["-O3"]})\n'),
    ('x = CUDAExtension("m", [], extra_compile_args={"nvcc": ["-lineinfo", "-O3"]})\n',
     'x = CUDAExtension("m", [], extra_compile_args={"nvcc": ["-O3"]})\n'),
    ('x = CUDAExtension("m", [], extra_compile_args=dict(nvcc=["-gencode", "arch=compute_80,code=sm_80", "-O2"]))\n',
     'x = CUDAExtension("m", [], extra_compile_args=dict(nvcc=["-O2"]))\n'),
    ('x = CUDAExtension("m", [], extra_compile_args={"nvcc": ["-arch=sm_80"]})\n',
     'x = CUDAExtension("m", [], extra_compile_args={"nvcc": []})\n'),
    ('F = ["-O3",\n     "-Xptxas=-v",\n     "--expt-relaxed-constexpr",\n     "-DX"]\nCUDAExtension("m", [], extra_compile_args={"nvcc": F})\n',
     'F = ["-O3",\n     "-DX"]\nCUDAExtension("m", [], extra_compile_args={"nvcc": F})\n'),
    ('f = ["-O3"]\nf.append("-lineinfo")\nf += ["--ftz=true"]\nCUDAExtension("m", [], extra_compile_args={"nvcc": f})\n',
     'f = ["-O3"]\nf += ["-fgpu-flush-denormals-to-zero"]\nCUDAExtension("m", [], extra_compile_args={"nvcc": f})\n'),
    ('def flags():\n    return ["-Xcompiler=-fPIC,-Wall"]\nload("m", ["a.cu"], extra_cuda_cflags=flags())\n',
     'def flags():\n    return ["-fPIC", "-Wall"]\nload("m", ["a.cu"], extra_cuda_cflags=flags())\n'),
    ('args = {"cxx": []}\nargs["nvcc"] = ["-rdc=true", "-O3 --use_fast_math -lineinfo"]\nCUDAExtension("m", [], extra_compile_args=args)\n',
     'args = {"cxx": []}\nargs["nvcc"] = ["-fgpu-rdc", "-O3 -ffast-math"]\nCUDAExtension("m", [], extra_compile_args=args)\n'),
    ('CUDAExtension("m", [], extra_link_args=["-lcublas", "-lcufft"])\n',
     'CUDAExtension("m", [], extra_link_args=["-lhipblas", "-lhipfft"])\n'),
    ('os.environ["TORCH_CUDA_ARCH_LIST"] = "7.0;8.0+PTX"\n', 'os.environ["PYTORCH_ROCM_ARCH"] = "gfx90a;gfx942"\n'),
    ("os.environ.setdefault('TORCH_CUDA_ARCH_LIST', '8.6')\n", "os.environ.setdefault('PYTORCH_ROCM_ARCH', 'gfx90a;gfx942')\n"),
    ('archs = os.getenv("TORCH_CUDA_ARCH_LIST")\n', 'archs = os.getenv("PYTORCH_ROCM_ARCH")\n'),
]

SETUP_UNCHANGED = [
    '"""Docstring: libraries=["cublas"], --use_fast_math, TORCH_CUDA_ARCH_LIST as words."""\n',
    '# extra_compile_args={"nvcc": ["-lineinfo"]}\nsetup(name="x")\n',
    'CUDAExtension("m", [], libraries=["cublas"] if not IS_HIP_EXTENSION else ["hipblas"])\n',
    'if torch.version.hip:\n    libs = ["hipblas"]\nelse:\n    libs = ["cublas"]\nCUDAExtension("m", [], libraries=libs)\n',
    'CUDAExtension("m", [], extra_compile_args={"cxx": ["-O3", "-lineinfo"]})\n',  # cxx flags are not nvcc's
    'print("--use_fast_math -lineinfo cublas")\n',
    'setup(name="x", description="links cublas")\n',
    "def broken(:\n    pass\n",  # not Python 3: left as it is, with a note
]


@pytest.mark.parametrize("src,expected", SETUP_CASES)
def test_setup_py(src, expected):
    assert out("setup.py", src) == expected
    ast.parse(expected)


@pytest.mark.parametrize("src", SETUP_UNCHANGED)
def test_setup_py_unchanged(src):
    assert out("setup.py", src) == src


def test_setup_py_reports_what_it_cannot_follow():
    src = ('import cfg\ncc = 80\nCUDAExtension("m", [], extra_compile_args={"nvcc": [f"-arch=sm_{cc}", "-lineinfo"] + cfg.FLAGS},\n'
           '              libraries=cfg.LIBS)\nflags = []\nflags.insert(0, "-lineinfo")\nCUDAExtension("n", [], extra_cuda_cflags=flags)\n')
    ported = port("setup.py", src)
    notes = "\n".join(ported.result.notes)
    assert "f-string `f'-arch=sm_{cc}'` left as written" in notes
    assert "`cfg.FLAGS` is computed" in notes or "cfg.FLAGS" in notes
    assert "libraries: `cfg.LIBS`" in notes
    text = ported.data.decode()
    assert '[f"-arch=sm_{cc}"] + cfg.FLAGS' in text  # the literal -lineinfo went, the f-string stayed
    assert 'flags.insert(0, "-lineinfo")' not in text  # a statement of its own: removed with its line
    ast.parse(text)


def test_setup_py_unparsable_is_a_note_not_a_failure():
    ported = port("setup.py", "print 'python 2'\n")
    assert ported.result.status == "unchanged"
    assert any("does not parse as Python 3" in n for n in ported.result.notes)


@pytest.mark.parametrize("terms", [3000, 30000])  # too deep to follow; too deep to parse
def test_setup_py_nested_too_deep_is_a_note_not_a_failure(terms):
    flags = " + ".join(f'["-arch=sm_{i % 90}"]' for i in range(terms))
    src = f'CUDAExtension("m", [], libraries=["cublas"], extra_compile_args={{"nvcc": {flags}}})\n'
    ported = port("setup.py", src)
    assert ported.result.status == "unchanged" and ported.data == src.encode()
    assert any("nests deeper than it can be followed" in n for n in ported.result.notes)


def test_setup_py_rename_and_bom_crlf():
    src = 'CUDAExtension("m", ["csrc/a.cpp", "csrc/k.cu"] + glob.glob("x/*.cu"))\r\n'
    expected = 'CUDAExtension("m", ["csrc/a.cpp", "csrc/k.hip"] + glob.glob("x/*.hip"))\r\n'
    assert out("setup.py", src, s=Settings(rename=True)) == expected
    assert out("setup.py", src) == src  # without --rename nothing changes
    bom = b"\xef\xbb\xbf" + 'CUDAExtension("m", [], libraries=["cublas"])\n'.encode()
    assert port("setup.py", bom).data == b"\xef\xbb\xbf" + 'CUDAExtension("m", [], libraries=["hipblas"])\n'.encode()


def test_setup_py_renamed_file_by_path():
    src = 'import os\nsrc = [os.path.join("csrc", "kern.cu"), "other/kern2.cu"]\n'
    ported = out("setup.py", src, s=Settings(rename=True), renamed=frozenset({"csrc/kern.cu", "other/kern2.cu"}))
    assert ported == 'import os\nsrc = [os.path.join("csrc", "kern.hip"), "other/kern2.hip"]\n'


# ---------------------------------------------------------------------------------------------
# Makefiles, shell scripts, Dockerfiles, requirements

MAKE_CASES = [
    ("NVCC = nvcc\n", "NVCC = hipcc\n"),
    ("NVCC := /usr/local/cuda/bin/nvcc\n", "NVCC := /opt/rocm/bin/hipcc\n"),
    ("FLAGS = -O3 -arch=sm_80 -lineinfo\n", "FLAGS = -O3 --offload-arch=gfx90a --offload-arch=gfx942\n"),
    ("FLAGS = -gencode arch=compute_70,code=sm_70 -gencode arch=compute_80,code=sm_80 -O2\n",
     "FLAGS = --offload-arch=gfx90a --offload-arch=gfx942 -O2\n"),
    ("LIBS = -L$(CUDA_HOME)/lib64 -lcudart -lcublas -lnvrtc\n", "LIBS = -L$(ROCM_HOME)/lib -lamdhip64 -lhipblas -lhiprtc\n"),
    ("F = -O3 \\\n    -lineinfo \\\n    -DX\n", "F = -O3 \\\n    -DX\n"),
    ("F = -Xcompiler -fopenmp --default-stream per-thread\n", "F = -fopenmp -fgpu-default-stream=per-thread\n"),
    ("export TORCH_CUDA_ARCH_LIST := 8.0;9.0\n", "export PYTORCH_ROCM_ARCH := gfx90a;gfx942\n"),
]
MAKE_UNCHANGED = [
    "# nvcc -arch=sm_80 -lcudart in a comment\nall:\n",
    "CFLAGS = -O2 -arch x86_64 -march=native\n",
    "LIBS = -lcudart_helper -lm\n",
    "my_nvcc_wrapper = x\n",
    "SRC = kernels.cu\n",
]


@pytest.mark.parametrize("src,expected", MAKE_CASES)
def test_makefile(src, expected):
    assert out("make", src) == expected


@pytest.mark.parametrize("src", MAKE_UNCHANGED)
def test_makefile_unchanged(src):
    assert out("make", src) == src


def test_makefile_rename():
    src = "SRC = a.cu b.cpp $(wildcard k/*.cu)\n%.o: %.cu\n"
    assert out("make", src, s=Settings(rename=True)) == "SRC = a.hip b.cpp $(wildcard k/*.hip)\n%.o: %.hip\n"


SHELL_CASES = [
    ("nvcc -O3 -arch=sm_90 a.cu -o a -lcublas\n", "hipcc -O3 --offload-arch=gfx90a --offload-arch=gfx942 a.cu -o a -lhipblas\n"),
    ("nvidia-smi\n", "rocm-smi\n"),
    ("nvidia-smi && echo ok\n", "rocm-smi && echo ok\n"),
    ('export TORCH_CUDA_ARCH_LIST="8.0 8.6"\n', 'export PYTORCH_ROCM_ARCH="gfx90a;gfx942"\n'),
    ("TORCH_CUDA_ARCH_LIST=8.0 python setup.py install\n", 'PYTORCH_ROCM_ARCH="gfx90a;gfx942" python setup.py install\n'),
    ("cmake -B b -DCMAKE_CUDA_ARCHITECTURES=80\n", 'cmake -B b -DCMAKE_HIP_ARCHITECTURES="gfx90a;gfx942"\n'),
    ("pip install torch --index-url https://download.pytorch.org/whl/nightly/cu126\n",
     "pip install torch --index-url https://download.pytorch.org/whl/nightly/rocm6.3\n"),
]
SHELL_UNCHANGED = [
    "# nvcc and nvidia-smi in a comment\necho hi\n",
    "GPUS=$(nvidia-smi -L | wc -l)\n",
    "nvidia-smi --query-gpu=name --format=csv\n",
    "nvidia-smi | grep MiB\n",
    "echo '#' nvcc_helper\n",
    "ls /usr/local/cudart\n",
]


@pytest.mark.parametrize("src,expected", SHELL_CASES)
def test_shell(src, expected):
    assert out("shell", src) == expected


@pytest.mark.parametrize("src", SHELL_UNCHANGED)
def test_shell_unchanged(src):
    assert out("shell", src) == src


def test_shell_notes_say_why_smi_stays():
    ported = port("shell", "X=$(nvidia-smi -L)\nnvidia-smi -q\nnsys profile ./a\n")
    notes = "\n".join(ported.result.notes)
    assert "its output is parsed" in notes and "it has arguments" in notes and "rocprofv3" in notes


DOCKER_CASES = [
    ("FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n", "FROM rocm/dev-ubuntu-22.04:6.3\n"),
    ("FROM docker.io/nvidia/cuda:12.4.1-runtime-ubuntu24.04 AS run\n", "FROM rocm/dev-ubuntu-24.04:6.3 AS run\n"),
    ("FROM --platform=linux/amd64 nvidia/cuda:11.8.0-cudnn8-devel-ubuntu20.04\n",
     "FROM --platform=linux/amd64 rocm/dev-ubuntu-20.04:6.3\n"),
    ("FROM pytorch/pytorch:2.3.1-cuda12.1-cudnn8-devel\n", "FROM rocm/pytorch:latest\n"),
    ("ENV TORCH_CUDA_ARCH_LIST=\"8.0\"\n", "ENV PYTORCH_ROCM_ARCH=\"gfx90a;gfx942\"\n"),
    ("ENV PATH=/usr/local/cuda-12.1/bin:$PATH\n", "ENV PATH=/opt/rocm/bin:$PATH\n"),
    ("RUN nvcc --version && \\\n    nvidia-smi\n", "RUN hipcc --version && \\\n    rocm-smi\n"),
    ("CMD nvidia-smi\n", "CMD rocm-smi\n"),
]
DOCKER_UNCHANGED = [
    "# FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nFROM ubuntu:22.04\n",
    "FROM python:3.11-slim\nRUN pip install numpy\n",
    "COPY nvcc.txt /tmp/\n",
    "FROM rocm/dev-ubuntu-22.04:6.2\n",
]


@pytest.mark.parametrize("src,expected", DOCKER_CASES)
def test_dockerfile(src, expected):
    assert out("docker", src) == expected


@pytest.mark.parametrize("src", DOCKER_UNCHANGED)
def test_dockerfile_unchanged(src):
    assert out("docker", src) == src


def test_pip_installs_of_cuda_only_packages_get_a_note():
    for kind, src in (("docker", "RUN pip install apex numpy \\\n    nvidia-dali-cuda120 && pip3 install torch\n"),
                      ("shell", "pip install --upgrade cupy-cuda12x==13.0 # pip install xformers\n")):
        ported = port(kind, src)
        assert ported.data.decode() == src
        notes = [n for n in ported.result.notes if "cuda-only-library" in n]
        assert {n.split("`")[1] for n in notes} == ({"apex", "nvidia-dali-cuda120"} if kind == "docker" else {"cupy-cuda12x"})


def test_dockerfile_follows_the_target_release():
    assert out("docker", "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n", target=(6, 2)) == "FROM rocm/dev-ubuntu-22.04:6.2\n"
    ported = port("docker", "FROM nvidia/cuda:12.1.0-devel-rockylinux9\n")
    assert any("Ubuntu 22.04 chosen" in n for n in ported.result.notes)


REQUIREMENTS_CASES = [
    ("--extra-index-url https://download.pytorch.org/whl/cu121\ntorch\n",
     "--extra-index-url https://download.pytorch.org/whl/rocm6.3\ntorch\n"),
    ("torch==2.4.0+cu124\ntorchaudio===2.4.0+cu124\n", "torch==2.4.0\ntorchaudio===2.4.0\n"),
    ("torch[opt]==2.4.0+cu118 ; python_version>'3.8'\n", "torch[opt]==2.4.0 ; python_version>'3.8'\n"),
]
REQUIREMENTS_UNCHANGED = [
    "# torch==2.1+cu121 in a comment\nnumpy\n",
    "cupy-cuda12x==13.0\nnvidia-cublas-cu12\napex\n",  # flagged by cuda-only-library, not rewritten
    "torch==2.4.0+rocm6.1\n",
    "mycu121pkg==1.0\n",
]


@pytest.mark.parametrize("src,expected", REQUIREMENTS_CASES)
def test_requirements(src, expected):
    assert out("requirements", src) == expected


@pytest.mark.parametrize("src", REQUIREMENTS_UNCHANGED)
def test_requirements_unchanged(src):
    assert out("requirements", src) == src


def test_cuda_only_packages_are_flagged_with_their_alternative():
    ported = port("requirements", "cupy-cuda12x\napex\nnvidia-cudnn-cu12\n")
    by_line = {f.line: f for f in ported.result.findings}
    assert by_line[1].category == "cuda-only-library" and "cupy-rocm" in by_line[1].suggestion
    assert "ROCm/apex" in by_line[2].suggestion
    assert by_line[3].category == "cuda-only-library"


# ---------------------------------------------------------------------------------------------
# across kinds


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_crlf_and_bom_are_kept(kind):
    src = {"cmake": "project(p CUDA)\n", "setup.py": 'CUDAExtension("m", [], libraries=["curand"])\n',
           "make": "NVCC = nvcc\n", "docker": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n",
           "requirements": "torch==2.1.0+cu121\n", "shell": "nvcc -c a.cu\n"}[kind]
    plain = out(kind, src).encode()
    crlf = port(kind, src.replace("\n", "\r\n")).data
    assert crlf == plain.replace(b"\n", b"\r\n")
    bom = port(kind, b"\xef\xbb\xbf" + src.encode()).data
    assert bom == b"\xef\xbb\xbf" + plain


@pytest.mark.parametrize("kind", sorted(NAMES))
def test_report_counts_and_notes(kind):
    src = {"cmake": "enable_language(CUDA)\n", "setup.py": 'CUDAExtension("m", [], libraries=["curand"])\n',
           "make": "NVCC = nvcc\n", "docker": "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n",
           "requirements": "torch==2.1.0+cu121\n", "shell": "nvcc -c a.cu\n"}[kind]
    r = port(kind, src).result
    assert r.status == "ported" and r.changed and r.replacements >= 1 and r.lines_changed == 1
    assert r.by_library


_TEXTS = st.lists(st.sampled_from([
    "nvcc", "-arch=sm_80", "-gencode", "arch=compute_80,code=sm_80", "--use_fast_math", "-lineinfo",
    "-Xptxas", "-v", "CUDA", "CUDA::cublas", "find_package(CUDAToolkit)", "(", ")", '"', "'", "#",
    "\n", "\r\n", " ", ";", "\\\n", "${CMAKE_CUDA_FLAGS}", "TORCH_CUDA_ARCH_LIST=", "8.0", "nvidia-smi",
    "$(", "|", "[", "]", ",", "=", "libraries=", "FROM ", "nvidia/cuda:12.1-devel", "+cu121", "x.cu",
    "add_library(", "RUN ", "\xe9", "\t", "{", "}", "-lcublas", "/usr/local/cuda", "lib64",
]), max_size=40).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_TEXTS, kind=st.sampled_from(sorted(NAMES)))
def test_random_build_text_never_fails_and_is_stable(text, kind):
    data = text.encode("utf-8")
    ported = port_source(data, NAMES[kind], kind, Settings())
    assert ported.result.status in ("ported", "unchanged"), ported.result.reason
    again = port_source(ported.data, NAMES[kind], kind, Settings())
    assert again.result.status in ("ported", "unchanged")


def test_cli_ports_build_files_in_a_tree(tmp_path):
    src = tmp_path / "proj"
    (src / "csrc").mkdir(parents=True)
    (src / "csrc" / "k.cu").write_text("__global__ void k() {}\n")
    (src / "CMakeLists.txt").write_text("project(p CXX CUDA)\nadd_library(k csrc/k.cu)\n")
    (src / "setup.py").write_text('CUDAExtension("m", ["csrc/k.cu"], libraries=["cublas"])\n')
    (src / "run.sh").write_text("nvcc -c csrc/k.cu\n")
    dst = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main(["port", str(src), "-o", str(dst), "--rename", "-j", "1"])
    assert exit_.value.code == 0
    assert (dst / "csrc" / "k.hip").is_file()
    assert (dst / "CMakeLists.txt").read_text() == "project(p CXX HIP)\nadd_library(k csrc/k.hip)\n"
    assert (dst / "setup.py").read_text() == 'CUDAExtension("m", ["csrc/k.hip"], libraries=["hipblas"])\n'
    assert (dst / "run.sh").read_text() == "hipcc -c csrc/k.hip\n"


def test_no_rewrite_inside_comments_anywhere():
    trigger = "nvcc -arch=sm_80 -lineinfo CUDA::cublas TORCH_CUDA_ARCH_LIST=8.0 /usr/local/cuda -lcublas"
    for kind, src in (("cmake", f"# {trigger}\n#[[ {trigger} ]]\n"), ("make", f"# {trigger}\n"),
                      ("docker", f"# {trigger}\n"), ("requirements", f"# {trigger}\n"),
                      ("shell", f"# {trigger}\necho x # {trigger}\n"), ("setup.py", f"# {trigger}\n")):
        assert out(kind, src) == src, kind
    assert re.search(r"\S", trigger)


@pytest.mark.parametrize("text, flagged", [
    ("execute_process(COMMAND cmake -DCMAKE_CUDA_ARCHITECTURES=80)\n", ["CMAKE_CUDA_ARCHITECTURES"]),
    ("set_target_properties(t PROPERTIES CUDA_ARCHITECTURES 80 CUDA_SEPARABLE_COMPILATION ON)\n",
     ["CUDA_ARCHITECTURES", "CUDA_SEPARABLE_COMPILATION"]),
    ('set(CMAKE_CUDA_FLAGS "-gencode arch=compute_80,code=sm_80")\n', ["arch=compute_80,code=sm_80"]),
    ("set(MY_CMAKE_CUDA_ARCHITECTURES 1 XCUDA_ARCHITECTURES xarch=compute_80 MY_TORCH_CUDA_ARCH_LIST)\n", []),
])
def test_build_flag_names_are_whole_words_or_after_define(text, flagged):
    """The architecture and RDC names the build-flag rules look for stand alone or right after
    `-D`; a longer word that holds one is the project's own."""
    found = port_source(text.encode(), "CMakeLists.txt", "cmake", Settings()).result.findings
    shown = [f.snippet[f.column - 1 : f.end_column - 1] for f in found if f.rule in ("HP1101", "HP1103")]
    assert sorted(shown) == sorted(flagged)


def test_build_files_are_not_lexed_as_c():
    """A CMake file's `#` comment lines would each be a preprocessor directive to the C lexer:
    the build rules read the file with their own scanners, and the C tokens are never made."""
    from hipport.analysis import context_for
    from hipport.check import check_context
    from hipport.rules import all_rules

    data = b"# Copyright\n# hipport: ignore[HP1102]\nset(CMAKE_CUDA_FLAGS \"-lineinfo -arch=sm_80\")\n"
    ctx = context_for(data, "CMakeLists.txt", "cmake", Settings())
    checked = check_context(ctx, all_rules())
    assert [f.rule for f in checked.findings] == ["HP1101"] and checked.suppressed == 1
    assert "lexed" not in ctx.__dict__
    source = context_for(b"#include <cuda_runtime.h>\n", "a.cu", "cuda", Settings())
    assert "lexed" in source.__dict__  # sources are lexed up front: a failure there is the file's


@pytest.mark.parametrize("data, commands, comments", [
    (b"\xef\xbb\xbfproject(x CUDA) # c\n", [("project", 3, 17, [b"x", b"CUDA"], b"")], [(19, 22)]),
    # quoted (an escaped quote inside), bracket argument, bracket comment inside the arguments
    (b'set(A "b\\"c" [=[x]]y]=] #[[in\nside]] d)\n', [("set", 0, 38, [b"A", b'b\\"c', b"x]]y", b"d"], b"")], [(24, 36)]),
    # a name starts after a digit; a newline before `(` makes no command; `\` before a newline
    # starts no argument
    (b"1abc(x)\nfoo\n(bar) baz (q\\\n r)", [("abc", 1, 6, [b"x"], b""), ("baz", 18, 28, [b"q", b"r"], b"")], []),
    (b"  if (A) # x\n  endif()\n", [("if", 2, 7, [b"A"], b"  "), ("endif", 15, 21, [], b"  ")], [(9, 12)]),
    (b'set(x "unterminated', [], []),  # nothing after an unterminated command is a command
    (b"f(a (b c) d)e(f)", [("f", 0, 11, [b"a", b"b", b"c", b"d"], b""), ("e", 12, 15, [b"f"], b"")], []),
    (b"x.y(z)", [("y", 2, 5, [b"z"], b"")], []),
])
def test_cmake_parse(data, commands, comments):
    from hipport.parse.cmake import parse

    got, got_comments = parse(data)
    assert [(c.name, c.start, c.close, [a.text for a in c.args], c.indent) for c in got] == commands
    assert got_comments == comments
