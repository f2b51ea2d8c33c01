"""The small HTML pieces every report page shares: the style sheet, number formatting, tables,
and the one-line texts of a link's rate and queue."""
from __future__ import annotations

import html

from ..expect import METRICS

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right} th{background:#f3f3f3}
td.l,th.l{text-align:left} .meta{color:#555} figure{margin:1em 0} img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:.8em;overflow:auto;font-size:.85em}
.verdicts{padding:.6em 1em;border-radius:6px;margin:1em 0} .verdicts.ok{background:#e8f5e9}
p.bad{background:#fdecea;border:1px solid #b00020;padding:0.5em} .verdicts.bad{background:#fdecea} tr.bad td:first-child{color:#b00020;font-weight:bold}
tr.ok td:first-child{color:#1b5e20;font-weight:bold}
th[title]{text-decoration:underline dotted;cursor:help}
"""


def fmt(v, spec=".3f"):
    if v is None:
        return "N/A"
    if isinstance(v, float):
        return format(v, spec)
    return html.escape(str(v))


def table(rows: list[dict], cols: list[tuple]) -> str:
    """cols: (key, header, format spec[, hover text of the header]); the first column is
    left-aligned."""
    head = "".join(f'<th class="{"l" if i == 0 else ""}"{th_title(c[3] if len(c) > 3 else None)}>'
                   f'{html.escape(c[1])}</th>' for i, c in enumerate(cols))
    body = []
    for r in rows:
        cells = "".join(f'<td class="{"l" if i == 0 else ""}">{fmt(r.get(c[0]), c[2])}</td>'
                        for i, c in enumerate(cols))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def th_title(text: str | None) -> str:
    """A header's hover text as an attribute (with a dotted underline: CSS ``th[title]``)."""
    return "" if not text else f" title='{html.escape(text, quote=True)}'"


def rate_text(bps):
    if bps is None:
        return "unlimited"
    return f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s"


def queue_text(q):
    parts = []
    if q.get("packets") is not None:
        parts.append(f"{q['packets']} pkt")
    if q.get("bytes") is not None:
        parts.append(f"{q['bytes']} B")
    return f"{q['kind']} " + (" / ".join(parts) if parts else "unlimited")


def verdicts_panel(verdicts, title: str = "Expectations") -> str:
    """The pass/fail panel at the top of a report (run or campaign verdicts)."""
    if not verdicts:
        return ""

    def unit(v):
        u = getattr(v, "unit", None)
        return u if u is not None else METRICS.get(v.metric, ("",))[0]
    fails = sum(not v.passed for v in verdicts)
    rows = "".join(
        f"<tr class='{'ok' if v.passed else 'bad'}'><td class='l'>{'PASS' if v.passed else 'FAIL'}</td>"
        f"<td class='l'>{html.escape(v.name)}</td><td>{fmt(v.value, '.4g')} "
        f"{html.escape(unit(v))}</td>"
        f"<td class='l'>{html.escape(v.bound)}</td><td class='l'>{html.escape(v.detail)}</td></tr>"
        for v in verdicts)
    return (f"<div class='verdicts {'bad' if fails else 'ok'}'><b>{html.escape(title)}: "
            f"{len(verdicts) - fails} passed, {fails} failed</b><table><tr><th class='l'>verdict</th>"
            f"<th class='l'>expectation</th><th>measured</th><th class='l'>bound</th>"
            f"<th class='l'>note</th></tr>{rows}</table></div>")


__all__ = ["CSS", "fmt", "queue_text", "rate_text", "table", "verdicts_panel"]
