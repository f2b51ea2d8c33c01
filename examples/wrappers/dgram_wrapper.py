#!/usr/bin/env python3
"""A Pantheon-style scheme wrapper around ccbench's datagram transport (`ccbench-dgram`): a
user-space UDP scheme behind the command-line interface of Pantheon's
`src/wrappers/<scheme>.py`, as CoCo-Beholder's `run.py` calls it:

    dgram_wrapper.py run_first                  -> prints "receiver" (the receiver listens first)
    dgram_wrapper.py setup | setup_after_reboot -> nothing to do
    dgram_wrapper.py receiver PORT              -> acknowledge datagrams arriving on PORT until killed
    dgram_wrapper.py sender IP PORT             -> send datagrams to IP:PORT until killed

The datagram scheme is $CCBENCH_SCHEME (the scheme's `name:`, which ccbench exports to command
schemes; default fixed), its parameters $CCBENCH_DGRAM_PARAMS (JSON, default none). Use it as

    flows:
      - scheme: {pantheon: {wrapper: examples/wrappers/dgram_wrapper.py, name: fixed}}

with `--backend emu`: the flow's packets are recorded by the emulator as it forwards them, as
for any program behind a wrapper (docs/datagram.md, "Behind a Pantheon wrapper").
`ccbench-dgram` is found through $CCBENCH_AGENT's directory or PATH (ccbench puts the directory
of its binaries first).
"""
import os
import sys


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    role = argv[0]
    if role == "run_first":
        print("receiver")
        return 0
    if role in ("setup", "setup_after_reboot"):
        return 0
    agent = os.environ.get("CCBENCH_AGENT")
    exe = os.path.join(os.path.dirname(agent), "ccbench-dgram") if agent else "ccbench-dgram"
    scheme = ["--scheme", os.environ.get("CCBENCH_SCHEME", "fixed"),
              "--params", os.environ.get("CCBENCH_DGRAM_PARAMS", "null")]
    if role == "receiver" and len(argv) == 2:
        args = [exe, "receiver", "--port", argv[1], *scheme]
    elif role == "sender" and len(argv) == 3:
        args = [exe, "sender", "--dst", argv[1], "--port", argv[2], *scheme]
    else:
        print(f"usage: {sys.argv[0]} run_first | receiver PORT | sender IP PORT", file=sys.stderr)
        return 2
    os.execvp(args[0], args)  # runs until the caller kills it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
