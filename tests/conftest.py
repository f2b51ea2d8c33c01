import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "tests"))

# Test files that run the kernel backend (network namespaces, TUN, BPF, real TCP). `make test`
# runs them by themselves after the rest, which runs on every core: their checks compare the
# emulator's timing with the link model's, and a second test process on the same two cores is
# exactly the load that makes the emulator flag its runs (docs/testing.md).
KERNEL_FILES = ("test_agree.py", "test_bpf_record.py", "test_capture_emu.py", "test_gym_deploy.py")


def _runs_the_kernel(path: Path) -> bool:
    return path.name.startswith("test_emu") or path.name in KERNEL_FILES


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel: runs the kernel backend; `make test` runs these alone")


def pytest_collection_modifyitems(config, items):
    import pytest
    for item in items:
        if _runs_the_kernel(item.path):
            item.add_marker(pytest.mark.kernel)
