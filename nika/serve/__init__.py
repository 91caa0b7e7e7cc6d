"""``nika serve``: the per-workflow run API (spec 08: "the reference engine's HTTP server exposes a
per-workflow run API"), its schedules and webhooks, the answer endpoint for paused gates and the
run dashboard (docs/serve.md; the threat model is in SECURITY.md).

Stages: :mod:`.config` (what is served, from the command line and the engine configuration),
:mod:`.guard` (the token, Host, CSRF and size checks), :mod:`.runs` (each run a subprocess ``nika
run``, recorded on disk), :mod:`.schedule` (cron with a clock seam), :mod:`.dashboard` (the HTML),
:mod:`.app` (the Starlette routes). Imported only by ``nika serve``.
"""
