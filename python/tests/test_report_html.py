"""Graph.optimize(report_html=...): the self-contained HTML report (docs/html_report.md).
The page is opened in a browser by tests/report_html_test.c; here its data is checked."""
import json
import pathlib

import pytest

import grapnel
from grapnel import Error

MODEL = pathlib.Path(__file__).resolve().parents[2] / "examples" / "models" / "ds_cnn_s.pb"


def page_data(html: str) -> dict:
    start = html.index('<script type="application/json" id="gn-data">') + len('<script type="application/json" id="gn-data">')
    return json.loads(html[start:html.index("</script>", start)])


def test_optimize_writes_the_html_report(tmp_path):
    out = tmp_path / "r.html"
    with grapnel.load(str(MODEL)) as g:
        n_before = len(g)
        # 'grapnel' fusions: the depthwise convolutions fuse too (the default, 'tensorflow', leaves them)
        report = g.optimize({"remap.policy": "grapnel"}, report_html=out)
        n_after = len(g)
    html = out.read_text()
    assert "http://" not in html and "https://" not in html and "<script src" not in html
    d = page_data(html)
    assert d["kind"] == "optimize"
    assert len(d["before"]["name"]) == n_before == 152 and len(d["after"]["name"]) == n_after == 39
    assert d["report"]["events"] == report["events"]
    fused = [e["node"] for e in report["events"] if e["pattern"] == "remap.contraction_bias_act"]
    ops = {d["after"]["op"][d["after"]["name"].index(n)] for n in fused}
    assert ops == {"_FusedConv2D", "_FusedDepthwiseConv2dNative", "_FusedMatMul"}   # each drawn with its new op, not as a copy of before


def test_optimize_html_report_error(tmp_path):
    with grapnel.load(str(MODEL)) as g:
        with pytest.raises(Error) as e:
            g.optimize(report_html=tmp_path / "missing" / "r.html")
    assert "missing/r.html" in str(e.value) and "No such file" in str(e.value)
