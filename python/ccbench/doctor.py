"""`ccbench doctor` lives with the emulation backend (ccbench.backends.emu.doctor); this name
stays as its public import path."""
from .backends.emu.doctor import (Check, EmuUnavailable, checks, experiment_schemes,  # noqa: F401
                                  kernel_ccs, preflight, report)
