"""`srtctl compare`: KPI deltas with bootstrap confidence intervals, what differed between the
runs, and the Pareto chart (docs/compare.md).

Modules: `inputs` (resolve and read job folders, sweep folders, rollup files: the only I/O),
`records` (the per-request arrays of the sa-bench result JSONs), `bootstrap` and `kpis` (the
statistics, pure), `recipe_diff` (settings and version drift, pure), `model` (the comparison,
pure), `render_text` and `render_html`.
"""
