// The inline stylesheet and script of report.html (no external fonts, scripts or images).
#pragma once

namespace speedlab::reports::html {

inline constexpr const char* stylesheet = R"CSS(
:root { --fg: #1d2329; --muted: #5b6570; --line: #d8dee4; --bg: #ffffff; --panel: #f6f8fa; --accent: #2f6db5;
        --critical: #b42318; --warning: #b54708; --info: #2f6db5; --ok: #2e7d32; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.45;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header.page { padding: 10px 32px 6px; border-bottom: 1px solid var(--line); }
header.page h1 { margin: 0 0 2px; font-size: 20px; }
.sub { color: var(--muted); margin: 0; }
.build-warning { border-left: 4px solid var(--warning); padding: 4px 10px; margin: 6px 0; background: #fff8f0; }
/* The links wrap onto more lines rather than widen the page (one link per workload). */
nav.toc { display: flex; flex-wrap: wrap; gap: 2px 14px; padding: 8px 32px; border-bottom: 1px solid var(--line);
          background: var(--panel); font-size: 14px; }
nav.toc a { color: var(--accent); text-decoration: none; white-space: nowrap; }
nav.toc a:hover { text-decoration: underline; }
main { padding: 8px 32px 32px; max-width: 1280px; }
section { margin-top: 28px; }
section#overview { margin-top: 4px; }
section#overview h2 { margin: 4px 0; }
h2 { font-size: 20px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 22px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em;
       background: var(--panel); padding: 0 3px; border-radius: 3px; overflow-wrap: break-word; }
.scroll { overflow-x: auto; margin: 8px 0 14px; }
table { border-collapse: collapse; font-size: 13.5px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.bad td { background: #fff4f2; }
tr.expected td { background: #f7f7f7; color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 10px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 120px; background: var(--panel); }
.card .big { font-size: 22px; font-weight: 600; }
.card .what { color: var(--muted); font-size: 13px; }
details { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 0 12px; }
details > summary { cursor: pointer; padding: 8px 0; font-weight: 600; }
details[open] > summary { border-bottom: 1px solid var(--line); margin-bottom: 8px; }
details .body { padding-bottom: 10px; }
.sev { display: inline-block; min-width: 64px; text-align: center; border-radius: 10px; padding: 0 8px;
       font-size: 12px; color: #fff; margin-right: 6px; text-transform: uppercase; }
.sev-critical .sev { background: var(--critical); }
.sev-warning .sev { background: var(--warning); }
.sev-info .sev { background: var(--info); }
.where { color: var(--muted); font-weight: normal; font-size: 13px; }
.note { color: var(--muted); font-size: 13.5px; }
figure { margin: 12px 0 18px; }
.charts { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; align-items: start; }
.charts figure { margin: 6px 0 10px; min-width: 0; }
.charts figure:empty { display: none; }
details.points > summary { font-weight: normal; font-size: 13.5px; padding: 4px 0; }
details.workload { border: none; padding: 0; margin: 0; }
details.workload > summary { padding: 0; }
details.workload > summary h2 { display: inline-block; margin: 10px 0 4px; border: none; }
details.workload[open] > summary { border-bottom: 1px solid var(--line); }
details.more > summary { font-weight: normal; }
@media (max-width: 900px) { .charts { grid-template-columns: 1fr; } }
figcaption { color: var(--muted); font-size: 13px; margin-top: 2px; }
svg.chart { max-width: 100%; height: auto; display: block; font: 12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
svg .grid { stroke: #e7ebef; stroke-width: 1; }
svg .frame { fill: none; stroke: #aab4be; }
svg .tick { fill: var(--muted); font-size: 11px; }
svg .axis-label { fill: var(--fg); font-size: 12px; }
svg .label { fill: var(--fg); font-size: 12px; }
svg .value { fill: var(--muted); font-size: 12px; }
svg .legend { fill: var(--fg); font-size: 12px; }
svg .note { fill: var(--muted); font-size: 11.5px; paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
svg .in-bar { fill: #fff; font-size: 11px; pointer-events: none; }
svg .in-bar.dark { fill: #1d2329; }
svg .bar:hover, svg .marker:hover { stroke: #000; stroke-width: 1; }
svg .series { fill: none; stroke-width: 2; }
svg .straggler-row { fill: #fde0dd; }
svg .straggler { fill: #b2182b; font-weight: 600; }
p.straggler-note { color: #b2182b; font-weight: 600; }
svg .series.dashed { stroke-dasharray: 7 3; }
table.overview td { padding: 2px 8px; vertical-align: middle; }
table.overview tr.first td { border-top: 2px solid #aab4be; }
table.overview svg.splitbar { display: block; outline: 1px solid var(--line); }
table.overview code { white-space: nowrap; }
table.overview tr:has(.win) td { background: #f1f8f1; }
.win { display: inline-block; font-size: 11px; font-weight: 600; color: #fff; background: var(--ok); border-radius: 8px;
       padding: 0 6px; }
table.overview td.top { min-width: 200px; max-width: 330px; font-size: 13px; }
table.overview td.at { min-width: 160px; max-width: 220px; overflow-wrap: break-word; font-size: 13px; }
table.overview td.wrap { white-space: normal; min-width: 90px; }
table.overview td.skipped { font-size: 13px; color: var(--muted); }
table.overview .phases { font-size: 13px; color: var(--muted); white-space: nowrap; }
table.overview td.folded { white-space: nowrap; }
p.skipped-line { font-size: 13.5px; color: var(--muted); margin: 4px 0; }
.dot::before { content: ""; display: inline-block; width: 8px; height: 8px; border-radius: 50%; margin-right: 5px; }
.dot.sev-critical::before { background: var(--critical); }
.dot.sev-warning::before { background: var(--warning); }
.dot.sev-info::before { background: var(--info); }
.v-faster { color: var(--ok); font-weight: 600; }
.v-slower { color: var(--critical); font-weight: 600; }
p.legend { font-size: 13px; margin: 4px 0; }
details.evidence { font-size: 13px; }
svg .whisker { stroke: #555; stroke-width: 1; }
svg .baseline { stroke: #333; stroke-dasharray: 5 4; }
svg .cross { stroke-dasharray: 3 3; stroke-width: 1.5; }
svg .band { opacity: 0.08; stroke: none; }
svg .roof { fill: none; stroke-width: 2.2; }
svg .roof-gpu { stroke: #2e7d32; }
svg .roof-cpu { stroke: #6a51a3; stroke-dasharray: 6 3; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin: 0 4px 0 10px; vertical-align: -1px; }
#controls { margin: 6px 0; }
#controls button { font: inherit; font-size: 13px; margin-right: 6px; padding: 2px 10px; border: 1px solid var(--line);
                   background: var(--panel); border-radius: 4px; cursor: pointer; }
footer { color: var(--muted); font-size: 12.5px; padding: 16px 32px; border-top: 1px solid var(--line); }
@media (max-width: 700px) { main, header.page, nav.toc, footer { padding-left: 12px; padding-right: 12px; } }
@media print {
  body { font-size: 10.5pt; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  nav.toc, #controls { display: none; }
  main { padding: 0; max-width: none; }
  header.page, footer { padding-left: 0; padding-right: 0; }
  a { color: inherit; text-decoration: none; }
  section { break-inside: auto; }
  figure, tr, details > summary { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  .scroll { overflow: visible; }
  details { border: none; padding: 0; }
  svg.chart { max-width: 100%; }
  /* Paper is narrower than a screen: tables shrink and wrap rather than run off the page. */
  table { width: 100%; }
  th, td, table.overview td.top, table.overview td.at, table.overview td.skipped { font-size: 7.5pt; padding: 2px 4px; }
  table .where, table .note, table.overview .phases { font-size: 7.5pt; }
  td.num, th.num, table.overview code, table.overview .phases, table.overview td.folded { white-space: normal; }
  table.overview td.top, table.overview td.at, table.overview td.wrap { min-width: 0; max-width: none; }
  @page { size: A4; margin: 12mm; }
}
)CSS";

// Expand/collapse buttons. Printing keeps the page as it is shown (folded parts stay folded:
// the default suite's page printed every part open was 93 pages); "Expand all" first prints
// everything. The page is complete without it: <details> opens natively and the controls
// stay hidden.
inline constexpr const char* script = R"JS(
(function () {
  var all = document.querySelectorAll('details');
  function set(open) { for (var i = 0; i < all.length; i++) all[i].open = open; }
  var bar = document.getElementById('controls');
  if (bar) {
    bar.hidden = false;
    document.getElementById('expand-all').onclick = function () { set(true); };
    document.getElementById('collapse-all').onclick = function () { set(false); };
  }
  // A link into a folded part (the overview's sweep links) opens it.
  function reveal() {
    var id = location.hash ? decodeURIComponent(location.hash.slice(1)) : '';
    var target = id ? document.getElementById(id) : null;
    for (var e = target; e; e = e.parentElement) if (e.tagName === 'DETAILS') e.open = true;
    if (target) target.scrollIntoView();
  }
  window.addEventListener('hashchange', reveal);
  reveal();
})();
)JS";

} // namespace speedlab::reports::html
