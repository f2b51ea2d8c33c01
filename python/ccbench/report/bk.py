"""Bokeh documents written directly as JSON, for the run and comparison reports.

Building figures with Bokeh's Python models costs ~0.7 s of imports and ~2.3 s of model
construction and serialisation for the quickstart's 28 figures (docs/benchmarks.md); the page
only needs the document's JSON, which BokehJS (the ``bokeh`` package's ``bokeh.min.js``,
inlined) turns into plots. This module writes that JSON for the few models the reports use —
figures with linear or log axes, lines, scatters, steps, segments, text, ellipses, legends,
hover and the standard tools, linked ranges, a column layout — in the form Bokeh's own
serialiser gives them (``bokeh.embed.components``, Bokeh 3.9), leaving every other property to
BokehJS's defaults. Nothing here imports bokeh; the library file is found by path.

The API follows ``bokeh.plotting.figure`` where the reports use it, so the figure code reads
as Bokeh code.
"""
from __future__ import annotations

import base64
import gzip
import importlib.metadata
import importlib.util
import itertools
import json
import math
import uuid
from pathlib import Path

import numpy as np

_ids = itertools.count(1000)

#: Bokeh's palettes (bokeh.palettes.Category10_10, Dark2_8)
Category10_10 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf")
Dark2_8 = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")
DASH = {"solid": [], "dashed": [6], "dotted": [2, 4], "dotdash": [2, 4, 6, 4],
        "dashdot": [6, 4, 2, 4]}


class Model:
    """A Bokeh model: its name and the attributes that differ from BokehJS's defaults."""

    def __init__(self, name: str, **attrs):
        self.name = name
        self.id = f"p{next(_ids)}"
        self.attrs = attrs

    def __setattr__(self, k, v):
        if k in ("name", "id", "attrs"):
            object.__setattr__(self, k, v)
        else:
            self.attrs[k] = v

    def __getattr__(self, k):
        try:
            return self.__dict__["attrs"][k]
        except KeyError:
            raise AttributeError(k) from None


def Range1d(start=0.0, end=1.0, bounds=None) -> Model:
    a = {"start": start, "end": end}
    if bounds is not None:
        a["bounds"] = list(bounds)
    return Model("Range1d", **a)


def DataRange1d(**kw) -> Model:
    return Model("DataRange1d", **kw)


class Map(dict):
    """A mapping serialised as Bokeh's {"type": "map"} (ColumnDataSource data)."""


def ColumnDataSource(data: dict) -> Model:
    return Model("ColumnDataSource", data=Map(data))


def HoverTool(tooltips, mode="mouse", renderers=None) -> Model:
    a = {"renderers": renderers or "auto", "tooltips": [list(t) for t in tooltips],
         "sort_by": None}
    if mode != "mouse":
        a["mode"] = mode
    return Model("HoverTool", **a)


def Legend(click_policy="hide", label_text_font_size=None) -> Model:
    a = {"click_policy": click_policy, "items": []}
    if label_text_font_size:
        a["label_text_font_size"] = label_text_font_size
    return Model("Legend", **a)


def _value(v):
    return {"type": "value", "value": v}


def _field_or_value(v, source_cols):
    if isinstance(v, str) and v in source_cols:
        return {"type": "field", "field": v}
    return _value(v)


def _tools(spec: str, active_scroll: str | None):
    tools, scroll = [], None
    for t in spec.split(","):
        t = t.strip()
        dims = "width" if t.startswith("x") else "both"
        base = t[1:] if t.startswith(("x", "y")) and t[1:] in ("pan", "wheel_zoom") else t
        if base == "pan":
            tools.append(Model("PanTool", **({"dimensions": dims} if dims != "both" else {})))
        elif base == "wheel_zoom":
            m = Model("WheelZoomTool", renderers="auto",
                      **({"dimensions": dims} if dims != "both" else {}))
            tools.append(m)
            if active_scroll == t:
                scroll = m
        elif base == "box_zoom":
            tools.append(Model("BoxZoomTool", dimensions="both"))
        elif base == "reset":
            tools.append(Model("ResetTool"))
        elif base == "save":
            tools.append(Model("SaveTool"))
        elif base == "hover":
            tools.append(HoverTool([]))
        elif t:
            raise ValueError(f"tool {t!r} is not supported by ccbench.report.bk")
    return tools, scroll


def _axis(kind: str, label: str | None) -> Model:
    if kind == "log":
        a = Model("LogAxis", ticker=Model("LogTicker", mantissas=[1, 5]),
                  formatter=Model("LogTickFormatter"), major_label_policy=Model("AllLabels"))
    else:
        a = Model("LinearAxis", ticker=Model("BasicTicker", mantissas=[1, 2, 5]),
                  formatter=Model("BasicTickFormatter"), major_label_policy=Model("AllLabels"))
    if label:
        a.attrs["axis_label"] = label
    return a


class _Grids:
    """``figure.grid``: setting ``visible`` sets it on both grids."""

    def __init__(self, grids):
        self._grids = grids

    def __setattr__(self, k, v):
        if k == "_grids":
            object.__setattr__(self, k, v)
        else:
            for g in self._grids:
                g.attrs[k] = v


class Figure(Model):
    def __init__(self, title="", width=600, height=600, tools="pan,wheel_zoom,box_zoom,reset,save",
                 active_scroll=None, x_axis_label=None, y_axis_label=None, sizing_mode=None,
                 output_backend=None, x_range=None, y_range=None, x_axis_type="linear",
                 y_axis_type="linear", tooltips=None):
        super().__init__("Figure")
        tl, scroll = _tools(tools, active_scroll)
        tb = {"tools": tl, "logo": None}
        if scroll is not None:
            tb["active_scroll"] = scroll
        a = self.attrs
        a.update(width=width, height=height)
        if sizing_mode:
            a["sizing_mode"] = sizing_mode
        a["x_range"] = x_range if x_range is not None else DataRange1d()
        a["y_range"] = y_range if y_range is not None else DataRange1d()
        a["x_scale"] = Model("LogScale" if x_axis_type == "log" else "LinearScale")
        a["y_scale"] = Model("LogScale" if y_axis_type == "log" else "LinearScale")
        a["title"] = Model("Title", text=title)
        a["renderers"] = []
        a["toolbar"] = Model("Toolbar", **tb)
        if output_backend and output_backend != "canvas":
            a["output_backend"] = output_backend
        grids = []
        if x_axis_type is not None:
            ax = _axis(x_axis_type, x_axis_label)
            a["below"] = [ax]
            grids.append(Model("Grid", axis=ax, dimension=0))
        if y_axis_type is not None:
            ay = _axis(y_axis_type, y_axis_label)
            a["left"] = [ay]
            grids.append(Model("Grid", axis=ay, dimension=1))
        if grids:
            a["center"] = grids
        self.grid = _Grids(grids)
        if tooltips is not None:
            for t in tl:
                if t.name == "HoverTool":
                    t.attrs["tooltips"] = [list(x) for x in tooltips]

    def __setattr__(self, k, v):
        if k == "grid":
            object.__setattr__(self, k, v)
        else:
            super().__setattr__(k, v)

    # -- layout
    def add_layout(self, obj: Model, place: str = "center") -> None:
        self.attrs.setdefault(place, []).append(obj)

    def add_tools(self, *tools: Model) -> None:
        self.attrs["toolbar"].attrs["tools"].extend(tools)

    def _legend(self, label: str, renderer: Model) -> None:
        legends = [m for m in self.attrs.get("right", []) + self.attrs.get("center", [])
                   if m.name == "Legend"]
        if not legends:
            legends = [Legend()]
            self.add_layout(legends[0], "center")
        items = legends[0].attrs["items"]
        for it in items:
            if it.attrs["label"]["value"] == label:
                it.attrs["renderers"].append(renderer)
                return
        items.append(Model("LegendItem", label=_value(label), renderers=[renderer]))

    def _glyph(self, glyph: Model, source: Model | None, legend_label=None, name=None) -> Model:
        r = Model("GlyphRenderer", data_source=source, glyph=glyph,
                  view=Model("CDSView", filter=Model("AllIndices")))
        if name is not None:
            r.attrs = {"name": name, **r.attrs}
        self.attrs["renderers"].append(r)
        if legend_label is not None:
            self._legend(str(legend_label), r)
        return r

    @staticmethod
    def _source(source, **columns):
        """The source, or one made of the given literal columns."""
        if source is not None:
            return source, set(source.attrs["data"])
        return ColumnDataSource(columns), set(columns)

    # -- glyphs
    def line(self, x, y, source=None, color="#1f77b4", line_dash="solid", line_width=1.0,
             legend_label=None, name=None, alpha=None):
        src, _ = self._source(source)
        a = {"x": {"type": "field", "field": x}, "y": {"type": "field", "field": y},
             "line_color": color, "line_width": line_width}
        if alpha is not None:
            a["line_alpha"] = alpha
        if DASH.get(line_dash, line_dash):
            a["line_dash"] = DASH.get(line_dash, line_dash)
        return self._glyph(Model("Line", **a), src, legend_label, name)

    def step(self, x, y, source=None, mode="before", color="#1f77b4", line_dash="solid",
             line_width=1.0, legend_label=None, name=None):
        a = {"x": {"type": "field", "field": x}, "y": {"type": "field", "field": y},
             "line_color": color, "line_width": line_width, "mode": mode}
        if DASH.get(line_dash, line_dash):
            a["line_dash"] = DASH.get(line_dash, line_dash)
        return self._glyph(Model("Step", **a), source, legend_label, name)

    def scatter(self, x, y, source=None, size=4, color="#1f77b4", alpha=1.0, legend_label=None,
                name=None, line_color=None):
        cols = set(source.attrs["data"]) if source is not None else set()
        a = {"x": {"type": "field", "field": x}, "y": {"type": "field", "field": y},
             "size": _field_or_value(size, cols),
             "line_color": _field_or_value(line_color or color, cols),
             "fill_color": _field_or_value(color, cols),
             "hatch_color": _field_or_value(color, cols)}
        if alpha != 1.0:
            a.update(line_alpha=_value(alpha), fill_alpha=_value(alpha), hatch_alpha=_value(alpha))
        return self._glyph(Model("Scatter", **a), source, legend_label, name)

    def segment(self, x0, y0, x1, y1, source=None, line_width=1.0, line_color="#1f77b4"):
        cols = set(source.attrs["data"])
        a = {k: {"type": "field", "field": v} for k, v in
             (("x0", x0), ("y0", y0), ("x1", x1), ("y1", y1))}
        a["line_color"] = _field_or_value(line_color, cols)
        a["line_width"] = _field_or_value(line_width, cols)
        return self._glyph(Model("Segment", **a), source)

    def text(self, x, y, text, source=None, text_align="left", text_baseline="bottom",
             text_color="#444444", text_font_size="16px"):
        cols = set(source.attrs["data"])
        a = {"x": {"type": "field", "field": x}, "y": {"type": "field", "field": y},
             "text": _field_or_value(text, cols), "text_color": _field_or_value(text_color, cols),
             "text_font_size": _value(text_font_size), "text_align": _value(text_align),
             "text_baseline": _value(text_baseline)}
        return self._glyph(Model("Text", **a), source)

    def ellipse(self, x, y, width, height, angle=0.0, fill_alpha=1.0, fill_color="#1f77b4",
                line_color="#1f77b4", legend_label=None):
        src = ColumnDataSource({"x": list(x), "y": list(y), "width": list(width),
                                "height": list(height), "angle": list(angle)})
        a = {k: {"type": "field", "field": k} for k in ("x", "y", "width", "height", "angle")}
        a.update(line_color=_value(line_color), fill_color=_value(fill_color),
                 fill_alpha=_value(fill_alpha))
        return self._glyph(Model("Ellipse", **a), src, legend_label)


def figure(**kw) -> Figure:
    return Figure(**kw)


def column(children, sizing_mode=None) -> Model:
    a = {"children": list(children)}
    if sizing_mode:
        a["sizing_mode"] = sizing_mode
    return Model("Column", **a)


# ---------------------------------------------------------------------------- serialisation

def _array(a: np.ndarray):
    a = np.ascontiguousarray(a)
    if a.dtype.kind in "iub":
        a = a.astype(np.int32) if a.dtype.kind != "b" and np.abs(a).max(initial=0) < 2**31 \
            else a.astype(np.float64)
    elif a.dtype.kind == "f":
        a = a.astype(np.float64)
    else:
        return [str(v) for v in a.tolist()]
    data = base64.b64encode(gzip.compress(a.tobytes(), compresslevel=2, mtime=1)).decode()
    return {"type": "ndarray", "array": {"type": "bytes", "data": data}, "shape": [len(a)],
            "dtype": str(a.dtype), "order": "little"}


def _column(v):
    if isinstance(v, np.ndarray):
        return _array(v)
    v = list(v)
    if v and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        return _array(np.asarray(v, dtype=np.float64))
    return [_plain(x) for x in v]


def _plain(v):
    if isinstance(v, float) and not math.isfinite(v):
        return {"type": "number", "value": "nan" if math.isnan(v) else ("+inf" if v > 0 else "-inf")}
    if isinstance(v, (np.floating,)):
        return _plain(float(v))
    if isinstance(v, (np.integer,)):
        return int(v)
    return v


def _ser(v, seen: set):
    if isinstance(v, Model):
        if v.id in seen:
            return {"id": v.id}
        seen.add(v.id)
        out = {"type": "object", "name": v.name, "id": v.id}
        if v.attrs:
            out["attributes"] = {k: _ser(x, seen) for k, x in v.attrs.items()}
        return out
    if isinstance(v, Map):
        return {"type": "map", "entries": [[k, _column(x)] for k, x in v.items()]}
    if isinstance(v, dict):
        return {k: _ser(x, seen) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_ser(x, seen) for x in v]
    return _plain(v)


def library() -> str:
    """The BokehJS library of the installed ``bokeh`` package, found without importing it."""
    spec = importlib.util.find_spec("bokeh")
    path = Path(next(iter(spec.submodule_search_locations))) / "server" / "static" / "js" / "bokeh.min.js"
    return ("<script>\n" + path.read_text() + "\n</script>\n"
            "<script>\nBokeh.set_log_level(\"info\");\n</script>\n")


def components(roots: list[Model]) -> tuple[str, list[str]]:
    """(script, divs) for ``roots`` in one document, like ``bokeh.embed.components``: the
    script embeds them once the page has loaded; each div marks where a root goes."""
    seen: set = set()
    docid = str(uuid.uuid4())
    doc = {"version": importlib.metadata.version("bokeh"), "title": "Bokeh Application",
           "roots": [_ser(r, seen) for r in roots]}
    divs, items = [], {}
    for r in roots:
        el = str(uuid.uuid4())
        items[r.id] = el
        divs.append(f'<div id="{el}" data-root-id="{r.id}" style="display: contents;"></div>')
    render = [{"docid": docid, "roots": items, "root_ids": [r.id for r in roots]}]
    text = json.dumps({docid: doc}, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    script = (f'<script type="application/json" id="ccb-doc-{docid}">{text}</script>\n'
              "<script>\n(function() {\n  const fn = function() {\n    Bokeh.safely(function() {\n"
              f'      const docs = JSON.parse(document.getElementById("ccb-doc-{docid}").textContent);\n'
              f"      Bokeh.embed.embed_items(docs, {json.dumps(render)});\n    }});\n  }};\n"
              '  if (document.readyState != "loading") fn();\n'
              '  else document.addEventListener("DOMContentLoaded", fn);\n})();\n</script>')
    return script, divs


__all__ = ["Category10_10", "ColumnDataSource", "Dark2_8", "DataRange1d", "Figure", "HoverTool",
           "Legend", "Model", "Range1d", "column", "components", "figure", "library"]
