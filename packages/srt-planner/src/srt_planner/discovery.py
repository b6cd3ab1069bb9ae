"""Dynamo discovery plane: which of etcd / NATS the job needs and the URLs processes get.

NATS only when a plane uses it (planner-and-runtime.md Q3): the request or event plane is ``nats``
or the recipe declares a ``nats`` service. A declared service with ``external`` replaces the
launched one and its URL is what processes are pointed at.
"""

from __future__ import annotations

from srt_planner.context import PlanContext
from srt_planner.ports import ETCD_CLIENT_PORT, NATS_PORT
from srt_schema.recipe import Recipe, ServiceConfig

__all__ = ["discovery_env", "etcd_url", "nats_url", "needs_etcd", "needs_nats", "otel_env"]


def _declared(recipe: Recipe, kind: str) -> ServiceConfig | None:
    for service in recipe.services:
        if service.type == kind or (service.name == kind and service.type == "generic"):
            return service
    return None


def needs_etcd(recipe: Recipe) -> bool:
    declared = _declared(recipe, "etcd")
    if declared is not None:
        return declared.enabled
    return recipe.frontend.type == "dynamo"


def needs_nats(recipe: Recipe) -> bool:
    declared = _declared(recipe, "nats")
    if declared is not None:
        return declared.enabled
    dynamo = recipe.dynamo
    return recipe.frontend.type == "dynamo" and "nats" in (dynamo.request_plane, dynamo.event_plane)


def etcd_url(ctx: PlanContext) -> str:
    declared = _declared(ctx.recipe, "etcd")
    if declared is not None and declared.external:
        return declared.external
    return f"http://{ctx.carving.infra}:{ETCD_CLIENT_PORT}"


def nats_url(ctx: PlanContext) -> str:
    declared = _declared(ctx.recipe, "nats")
    if declared is not None and declared.external:
        return declared.external
    return f"nats://{ctx.carving.infra}:{NATS_PORT}"


def discovery_env(ctx: PlanContext) -> dict[str, str]:
    env: dict[str, str] = {}
    if needs_etcd(ctx.recipe):
        env["ETCD_ENDPOINTS"] = etcd_url(ctx)
    if needs_nats(ctx.recipe):
        env["NATS_SERVER"] = nats_url(ctx)
    return env


def otel_env(ctx: PlanContext, service_name: str) -> dict[str, str]:
    observability = ctx.recipe.observability
    if not (observability.enable_otel and observability.otel_endpoint):
        return {}
    return {
        "OTEL_EXPORT_ENABLED": "true",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": observability.otel_endpoint,
        "OTEL_EXPORTER_OTLP_ENDPOINT": observability.otel_endpoint,
        "OTEL_SERVICE_NAME": service_name,
    }
