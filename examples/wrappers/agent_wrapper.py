#!/usr/bin/env python3
"""A Pantheon-style scheme wrapper around ccbench's own flow agent (`ccbench-agent`).

It implements the command-line interface of Pantheon's `src/wrappers/<scheme>.py`, the way
CoCo-Beholder's `run.py` calls it:

    agent_wrapper.py run_first                 -> prints "receiver" (the receiver is the server)
    agent_wrapper.py setup | setup_after_reboot -> nothing to do
    agent_wrapper.py receiver PORT             -> listen on PORT, read and discard until killed
    agent_wrapper.py sender IP PORT            -> connect to IP:PORT and send bulk data until killed

The congestion control is $CCBENCH_SCHEME (the scheme's `name:`, which ccbench exports to
command schemes), default cubic. Use it in an experiment file as

    flows:
      - scheme: {pantheon: {wrapper: examples/wrappers/agent_wrapper.py, name: cubic}}

and run it with `--backend emu`. `ccbench-agent` is found on PATH (ccbench puts the directory of
its binaries first).
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
    agent = os.environ.get("CCBENCH_AGENT", "ccbench-agent")
    if role == "receiver" and len(argv) == 2:
        args = [agent, "server", "--port", argv[1]]
    elif role == "sender" and len(argv) == 3:
        cc = os.environ.get("CCBENCH_SCHEME", "cubic")
        args = [agent, "client", "--dst", argv[1], "--port", argv[2], "--cc", cc]
    else:
        print(f"usage: {sys.argv[0]} run_first | receiver PORT | sender IP PORT", file=sys.stderr)
        return 2
    os.execvp(args[0], args)  # the agent runs until the caller kills it


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
