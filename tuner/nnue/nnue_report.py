"""nnue_report - the training's page: one self-contained HTML file (inline SVG, no script), in the
style of the tuning report (report/report.c): settings, then training and validation loss."""
import html
import math

STYLE = (
    ":root{--ink:#1f2328;--muted:#656d76;--line:#d0d7de;--soft:#f6f8fa;--blue:#0969da;"
    "--green:#1a7f37;--red:#cf222e;--amber:#9a6700}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:#eef1f5;color:var(--ink);"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "header.top{background:#24292f;color:#fff;padding:18px 32px}\n"
    "header.top .brand{font-size:12px;letter-spacing:.08em;text-transform:uppercase;color:#9ea7b3}\n"
    "header.top h1{margin:4px 0 8px;font-size:24px;font-weight:600}\n"
    "main{max-width:1180px;margin:0 auto;padding:20px 16px 8px}\n"
    "section.card{background:#fff;border:1px solid var(--line);border-radius:8px;"
    "padding:14px 18px 16px;margin-bottom:18px}\n"
    "h2{font-size:16px;margin:0 0 10px;font-weight:600}\n"
    "h2 .sub{font-weight:400;color:var(--muted);font-size:13px;margin-left:8px}\n"
    "table{border-collapse:collapse;width:100%}\n"
    "th,td{padding:5px 8px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:top}\n"
    "table.kv th{width:30%;color:var(--muted);font-weight:500}\n"
    "table.data th{background:var(--soft);font-weight:600;font-size:13px}\n"
    "table.data td.num,table.data th.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "svg.chart{display:block;width:100%;height:auto}\n"
    ".chart .frame{fill:#fff;stroke:var(--line)}\n"
    ".chart .grid{stroke:#eaeef2}\n"
    ".chart text{font-family:system-ui,sans-serif;font-size:11px;fill:var(--muted)}\n"
    ".chart text.axis{font-size:12px;fill:var(--ink)}\n"
    ".chart .line{fill:none;stroke:var(--blue);stroke-width:2;stroke-linejoin:round}\n"
    ".chart .line.val{stroke:var(--red)}\n"
    ".chart .line.step{stroke:#8c959f;stroke-width:1}\n"
    ".chart .dot{fill:var(--blue)}.chart .dot.val{fill:var(--red)}\n"
    ".legend{color:var(--muted);font-size:12px;margin:6px 2px 0}\n"
    ".key{display:inline-block;width:18px;height:0;border-top:2px solid var(--blue);"
    "vertical-align:middle;margin:0 4px 0 10px}\n"
    ".key.val{border-color:var(--red)}.key.step{border-color:#8c959f;border-top-width:1px}\n"
    "footer{text-align:center;color:var(--muted);font-size:12px;padding:4px 0 24px}\n")


def _axis(lo, hi, ticks):
    """A tick step of 1, 2 or 5 x 10^n and the axis's ends on it, about `ticks` ticks."""
    if hi <= lo:
        hi = lo + (abs(lo) or 1) * 0.01
    raw = (hi - lo) / max(ticks, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step, step


def _tick(v, step):
    digits = max(0, -int(math.floor(math.log10(step)))) if step < 1 else 0
    return f"{v:.{digits}f}"


def chart(series, x_label, y_label, width=1100, height=360):
    """An inline SVG of line series: [(css class, [(x, y), ...], dots)], on shared axes."""
    pts = [p for _, s, _ in series for p in s]
    left, top = 64, 12
    w, h = width - left - 14, height - top - 38
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" '
           f'role="img" aria-label="{html.escape(y_label)} by {html.escape(x_label)}">',
           f'<rect class="frame" x="{left}" y="{top}" width="{w}" height="{h}"/>']
    if not pts:
        out.append("</svg>")
        return "\n".join(out)
    x0, x1, xs = _axis(min(0, min(p[0] for p in pts)), max(p[0] for p in pts), width // 110)
    y0, y1, ys = _axis(min(p[1] for p in pts), max(p[1] for p in pts), height // 48)

    def px(x):
        return left + (x - x0) / (x1 - x0) * w

    def py(y):
        return top + h - (y - y0) / (y1 - y0) * h

    for i in range(int(round((x1 - x0) / xs)) + 1):
        v = x0 + i * xs
        out.append(f'<line class="grid" x1="{px(v):.1f}" y1="{top}" x2="{px(v):.1f}" y2="{top + h}"/>'
                   f'<text x="{px(v):.1f}" y="{top + h + 15}" text-anchor="middle">{_tick(v, xs)}</text>')
    for i in range(int(round((y1 - y0) / ys)) + 1):
        v = y0 + i * ys
        out.append(f'<line class="grid" x1="{left}" y1="{py(v):.1f}" x2="{left + w}" y2="{py(v):.1f}"/>'
                   f'<text x="{left - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{_tick(v, ys)}</text>')
    for cls, s, dots in series:
        if len(s) > 1:
            out.append(f'<polyline class="line {cls}" points="' +
                       " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s) + '"/>')
        if dots:
            out.extend(f'<circle class="dot {cls}" cx="{px(x):.1f}" cy="{py(y):.1f}" r="3"/>' for x, y in s)
    out.append(f'<text class="axis" x="{left + w / 2:.1f}" y="{height - 4}" text-anchor="middle">'
               f'{html.escape(x_label)}</text>')
    out.append(f'<text class="axis" transform="translate(14 {top + h / 2:.1f}) rotate(-90)" '
               f'text-anchor="middle">{html.escape(y_label)}</text></svg>')
    return "\n".join(out)


def write_page(path, title, settings, epochs, steps, quant):
    """The page: settings (key, value), loss per epoch (train, val) and per logged step, quantisation figures.

    epochs: [(epoch, train loss, val loss)]; steps: [(epoch as a fraction, running train loss)].
    """
    e_train = [(e, t) for e, t, _ in epochs if t is not None]
    e_val = [(e, v) for e, _, v in epochs if v is not None]
    rows = "\n".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in settings)
    table = "\n".join(
        f'<tr><td class="num">{e}</td><td class="num">{"-" if t is None else f"{t:.6f}"}</td>'
        f'<td class="num">{"-" if v is None else f"{v:.6f}"}</td></tr>' for e, t, v in epochs)
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} &middot; Xiangqi Forge</title>
<style>
{STYLE}</style>
</head>
<body>
<header class="top"><div class="brand">Xiangqi Forge &middot; network training</div>
<h1>{html.escape(title)}</h1></header>
<main>
<section class="card"><h2>Loss<span class="sub">mean squared error of sigmoid(eval / K) against the target</span></h2>
{chart([("step", steps, False), ("", e_train, True), ("val", e_val, True)], "epoch", "loss")}
<p class="legend"><span class="key"></span>training (epoch mean)<span class="key val"></span>validation
<span class="key step"></span>training (running mean, per progress line)</p>
<table class="data"><tr><th class="num">epoch</th><th class="num">training loss</th>
<th class="num">validation loss</th></tr>
{table}
</table></section>
<section class="card"><h2>Quantisation<span class="sub">integer net against the float net, held-out positions</span></h2>
<table class="kv">{"".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>" for k, v in quant)}</table>
</section>
<section class="card"><h2>Settings</h2><table class="kv">
{rows}
</table></section>
</main>
<footer>tuner/nnue/train.py &middot; docs/nnue.md</footer>
</body>
</html>
"""
    with open(path, "w") as f:
        f.write(page)
