"""Congestion control written in Python, run by the simulator (docs/python-schemes.md).

Two kinds of scheme:

* :class:`Scheme` — per-ACK hooks mirroring the simulator's ``CongestionControl`` trait and
  Linux ``struct tcp_congestion_ops`` (include/net/tcp.h). Define the hooks you need; the
  simulator calls only the ones your class has::

      init(sk)                          connection established
      ssthresh(sk) -> int               new ssthresh on entering CWR/Recovery/Loss (required)
      cong_avoid(sk, acked)             window growth on an ACK (core PRR handles recovery)
      cong_control(sk, rs) -> bool      every ACK instead of the core's window logic (BBR-like;
                                        rs: rate sample); defining it makes the scheme own cwnd
      set_state(sk, new_state)          "open" / "disorder" / "cwr" / "recovery" / "loss"
      cwnd_event(sk, event)             "tx_start" / "cwnd_restart" / "complete_cwr" / "loss"
      pkts_acked(sk, acked, rtt_us, in_flight)   RTT sample (rtt_us = -1: none)
      in_ack_event(sk, flags)           every ACK; flags CA_ACK_SLOWPATH | CA_ACK_WIN_UPDATE | CA_ACK_ECE
      skb_marked_lost(sk, tx_in_flight, tx_lost, is_app_limited, tx_valid)
      undo_cwnd(sk) -> int              window after a spurious reduction (default max(cwnd, prior_cwnd))

  ``sk`` is the live socket (:class:`ccbench._core.Sock`): read any field, write ``cwnd``,
  ``ssthresh``, ``snd_cwnd_cnt``, ``cwnd_clamp``, ``pacing_rate`` (bit/s), ``pacing_status``
  ("none" / "needed"), ``pacing_shift``. It is valid only during the call.

* :class:`Controller` — a periodic controller: ``on_interval(sk, st)`` is called at the first
  ACK after each monitor interval (``interval``: a time such as ``"10ms"`` or a multiple of the
  smoothed RTT such as ``"rtt"``, ``"2rtt"``) with the interval's statistics ``st``
  (:class:`ccbench._core.IntervalStats`) and returns ``None`` (keep the command) or
  ``{"cwnd": packets, "pacing_rate": bit/s}`` (either may be omitted or None).

Both: ``record = ("name", ...)`` lists attributes written into the ``flows`` table as
``cc_<name>`` columns at every sample; ``needs_ecn = True`` negotiates ECN (as DCTCP);
``self.rng`` (a ``random.Random`` seeded from the experiment seed and the connection) is the
deterministic source of randomness; ``self.flow``/``self.conn`` name the flow/connection.
"""
from __future__ import annotations

from typing import Any

try:  # the compiled simulator; ccbench.cc imports without it (docs, config checks)
    from .._core import SchemeError  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    class SchemeError(RuntimeError):  # type: ignore[no-redef]
        """An exception raised by a Python congestion-control scheme."""

#: ``in_ack_event`` flags (Linux ``CA_ACK_*``).
CA_ACK_SLOWPATH = 1 << 0
CA_ACK_WIN_UPDATE = 1 << 1
CA_ACK_ECE = 1 << 2
#: ``TCP_INFINITE_SSTHRESH``: ssthresh before the first reduction.
TCP_INFINITE_SSTHRESH = 0x7FFFFFFF
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")
CA_EVENTS = ("tx_start", "cwnd_restart", "complete_cwr", "loss", "ecn_no_ce", "ecn_is_ce")


class _Base:
    #: Attributes recorded into the flows table as ``cc_<name>``.
    record: tuple[str, ...] = ()
    #: Negotiate ECN on this flow unless the group says ``ecn: false`` (Linux TCP_CONG_NEEDS_ECN).
    needs_ecn = False

    def __init__(self, **params: Any) -> None:
        for k, v in params.items():
            setattr(self, k, v)


class Scheme(_Base):
    """Per-ACK scheme base: Reno's ``ssthresh`` and ``undo_cwnd``; add the hooks you need."""

    #: Use non-SACK (NewReno, RFC 6582) recovery at both ends, as the built-in ``newreno``.
    non_sack_recovery = False

    def ssthresh(self, sk) -> int:
        return tcp_reno_ssthresh(sk)


class Controller(_Base):
    """Periodic controller base. Subclasses define ``on_interval(sk, st)``.

    ``interval``: ``"10ms"``-style time, a number of seconds, or ``"rtt"`` / ``"<k>rtt"``
    (k × the smoothed RTT at the start of the interval). Only a pacing rate commanded ⇒ cwnd =
    2 × rate × sRTT (the rate limits sending); nothing commanded yet ⇒ the initial window."""

    interval: Any = "rtt"

    def on_interval(self, sk, st) -> dict | None:  # pragma: no cover - abstract
        raise NotImplementedError


# --- Linux helpers (net/ipv4/tcp_cong.c), in Python -------------------------------------------

def tcp_slow_start(sk, acked: int) -> int:
    """``tcp_slow_start``: cwnd = min(cwnd + acked, ssthresh); returns the acked left over."""
    cwnd = sk.cwnd
    new = min(cwnd + acked, sk.ssthresh)
    acked -= new - cwnd
    sk.cwnd = min(new, sk.cwnd_clamp)
    return acked


def tcp_cong_avoid_ai(sk, w: int, acked: int) -> None:
    """``tcp_cong_avoid_ai``: cwnd += 1 per ``w`` packets acked (credit in ``snd_cwnd_cnt``)."""
    w = max(w, 1)
    cnt = sk.snd_cwnd_cnt
    cwnd = sk.cwnd
    if cnt >= w:
        cnt = 0
        cwnd += 1
    cnt += acked
    if cnt >= w:
        delta = cnt // w
        cnt -= delta * w
        cwnd += delta
    sk.snd_cwnd_cnt = cnt
    sk.cwnd = min(cwnd, sk.cwnd_clamp)


def tcp_reno_ssthresh(sk) -> int:
    """``tcp_reno_ssthresh``: max(cwnd / 2, 2)."""
    return max(sk.cwnd >> 1, 2)


__all__ = ["Scheme", "Controller", "SchemeError", "tcp_slow_start", "tcp_cong_avoid_ai",
           "tcp_reno_ssthresh", "CA_ACK_SLOWPATH", "CA_ACK_WIN_UPDATE", "CA_ACK_ECE",
           "TCP_INFINITE_SSTHRESH", "CA_STATES", "CA_EVENTS"]
