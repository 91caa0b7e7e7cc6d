"""What one run shares across its model and tool calls: the providers (one HTTP client), the MCP
servers it started, and the engine configuration they read.

Engine configuration comes from the engine's environment (``Run.engine_env``), never from the
workflow: ``NIKA_<ID>_BASE_URL`` / ``NIKA_<ID>_API_KEY`` and each provider's documented key
variable; ``NIKA_PRICES`` (JSON: ``{"provider/model": {"input": usd, "output": usd}}`` per million
tokens; an agent's cost ceiling, ``NIKA_AGENT_MAX_COST_USD``, is read by :mod:`runtime.agent.ledger`);
``NIKA_MOCK_SCRIPT`` for the scripted mock, ``NIKA_MOCK_ERROR`` / ``NIKA_MOCK_JSON`` /
``NIKA_MOCK_STREAMING`` for the configured ones. The MCP server table (:mod:`runtime.tools.mcp_config`)
is read once, here, before the first task; everything else is created on first use and closed
when the run ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runtime.errors import TaskError
from runtime.providers.base import Provider
from runtime.tools.mcp_config import McpConfig, snapshot


class Services:
    def __init__(
        self,
        env: Mapping[str, str],
        workdir: Path,
        secret_values: set[str] | None = None,
        mcp_config: McpConfig | None = None,
    ) -> None:
        self.env = dict(env)
        self.workdir = workdir
        self.secret_values = secret_values if secret_values is not None else set()
        # name -> runtime.net.egress.Held: the declared secrets resolved so far, with their egress rules
        self.held: dict[str, Any] = {}
        self._providers: dict[str, Provider] = {}
        self._http: Any = None
        self.mcp_config = mcp_config if mcp_config is not None else snapshot(workdir, self.env)
        self.mcp: Any = None
        self._prices: Any = None
        self.meter: Any = None  # the run's runtime.providers.cost.CostMeter: every model call is bounded and priced

    # -- providers ------------------------------------------------------------------------------

    def provider_for(self, model: str) -> tuple[Provider, str]:
        """The provider answering ``provider/name`` and the model name within it (one instance per run)."""
        prefix, _, name = model.partition("/")
        prov = self._providers.get(prefix)
        if prov is None:
            from runtime.providers.registry import make_provider

            prov = make_provider(prefix, self)
            self._providers[prefix] = prov
        if self.meter is not None:
            return self.meter.wrap(prov, prefix), name
        return prov, name

    def http(self) -> Any:
        """The run's one async HTTP client (``httpx`` is imported only when a real provider is used)."""
        if self._http is None:
            import httpx

            from runtime.guard import limits
            from runtime.net.decode import ACCEPT_ENCODING

            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(limits.CLOUD_CALL_TIMEOUT_S, connect=limits.CONNECT_TIMEOUT_S),
                follow_redirects=False,
                trust_env=False,
                headers={"accept-encoding": ACCEPT_ENCODING},  # the codings the one bounded decoder reads
            )
        return self._http

    def remember_secret(self, value: str) -> None:
        """A key the run handles: redacted from the trace and every message like ``secrets.*``."""
        if value:
            self.secret_values.add(value)

    # -- cost ------------------------------------------------------------------------------------

    def _price_table(self) -> Any:
        """The one price table (the certificate's, ``checker.views.certificate.prices``)."""
        if self._prices is None:
            from checker.views.certificate.prices import prices_from_env

            table = prices_from_env(self.env)
            if table.error is not None and not table.prices and "JSON" in table.error:
                raise TaskError("NIKA-PROVIDER-001", table.error)
            self._prices = table
        return self._prices

    def cost_of(self, model: str, tokens_in: int, tokens_out: int) -> float:
        p = self._price_table().get(model)
        if p is None:
            return 0.0
        return p.usd(tokens_in, tokens_out)

    def is_priced(self, model: str) -> bool:
        return self._price_table().get(model) is not None

    # -- shutdown --------------------------------------------------------------------------------

    async def aclose(self) -> None:
        if self.mcp is not None:
            await self.mcp.aclose()
            self.mcp = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None
