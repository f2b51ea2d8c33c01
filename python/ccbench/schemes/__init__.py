"""Reference ports of built-in simulator schemes to the Python interface (ccbench.cc).

They produce the same packets as the Rust versions on the same experiments
(tests/test_pycc_ports.py) — the check that the interface carries everything a Linux-style
congestion-control module needs.

* ``ccbench.schemes.reno:Reno`` — crates/sim/src/cc/reno.rs (Linux tcp_cong.c)
* ``ccbench.schemes.vegas:Vegas`` — crates/sim/src/cc/vegas.rs (Linux tcp_vegas.c)
"""
