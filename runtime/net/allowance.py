"""The project's ``fetch-allow-private`` list joined onto ``NIKA_FETCH_ALLOW_PRIVATE`` when a run is
set up (the SSRF floor that reads it is :mod:`runtime.net.ssrf`). On its own so that setting up a
run, which every run does, does not load the floor's address tables (:mod:`ipaddress`): only a
request judged against them does."""

from __future__ import annotations

from typing import Any

ALLOW_ENV = "NIKA_FETCH_ALLOW_PRIVATE"
PROJECT_KEY = "fetch-allow-private"
# Set by with_project_allowance when the project list was withheld: why, for the refusal message.
WITHHELD_ENV = "NIKA_FETCH_ALLOW_PRIVATE_WITHHELD"


def with_project_allowance(env: dict[str, str], workflow_file: str, boundary: Any) -> dict[str, str]:
    """The run's engine environment with the project's ``fetch-allow-private`` list joined onto
    ``NIKA_FETCH_ALLOW_PRIVATE`` (the union); withheld, and why, when the workflow may write the
    project file. A malformed project file was refused at admission; a run set up without one
    (a library caller) keeps the environment as it is."""
    from checker.project.config_files import SettingsError
    from checker.project.settings import settings_for

    try:
        settings = settings_for(workflow_file)
    except SettingsError:
        return env
    if not settings.fetch_allow_private or settings.origin is None:
        return env
    grant = boundary.write_grant_covering(settings.origin)
    if grant is not None:
        why = (
            f"the project's `{PROJECT_KEY}` in {settings.origin} is not honoured: the file lies inside "
            f"`permits.fs.write` ({grant}), so the workflow could rewrite it"
        )
        return {**env, WITHHELD_ENV: why}
    items = [x for x in (env.get(ALLOW_ENV) or "").split(",") if x.strip()] + list(settings.fetch_allow_private)
    return {**env, ALLOW_ENV: ",".join(dict.fromkeys(x.strip() for x in items))}
