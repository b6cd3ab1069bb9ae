"""Explicit nulls and the per-mode keys of the layout a recipe does not have (docs/recipes.md
#migration rule 3, roles).

Runs before the roles fold, so that neither becomes a role:

- A legacy role key written as null (``resources.prefill_nodes: null``) is unset, as v1 read it.
  In a plain recipe or a base it is removed with a note; in an override section whose keys for a
  role are all null it deletes the base's role (``roles.prefill: null``), which is what the
  override meant.
- v1 read only the per-mode backend keys of the layout it ran (``<engine>_config.aggregated``,
  ``aggregated_environment`` ... for an aggregated recipe; the prefill and decode ones for a
  disaggregated one) and ignored the others. They are removed with a note, so the migrated recipe
  does what the v1 one did, instead of growing a role the recipe has no resources for.
"""

from __future__ import annotations

from srt_schema.migrate._context import Variant
from srt_schema.migrate._yaml import pop_key

__all__ = ["drop_null_role_keys", "drop_unused_modes"]

_ROLE_KEYS: dict[str, tuple[str, ...]] = {
    role: (f"{role}_nodes", f"{role}_workers", f"gpus_per_{role}", f"{role}_critical")
    for role in ("prefill", "decode", "agg")
}
_LAYOUT_KEYS: dict[str, tuple[str, ...]] = {role: keys[:3] for role, keys in _ROLE_KEYS.items()}
_MODES = {"prefill": "prefill", "decode": "decode", "agg": "aggregated"}


def drop_null_role_keys(v: Variant) -> None:
    resources = v.doc.get("resources")
    if not isinstance(resources, dict):
        return
    for role, keys in _ROLE_KEYS.items():
        nulls = [key for key in keys if key in resources and resources[key] is None]
        if not nulls:
            continue
        others = [key for key in keys if key in resources and resources[key] is not None]
        if v.is_override and others and v.role_exists(role):
            continue  # the override deletes single fields of a role it keeps
        for key in nulls:
            pop_key(resources, key)
        shown = ", ".join(f"resources.{key}" for key in nulls)
        if v.is_override and v.role_exists(role):
            v.child_map(v.doc, "roles")[role] = None
            v.note(f"{shown}: null -> roles.{role}: null (the override removes the base's role)")
        else:
            v.note(f"removed {shown}: null (null means unset)")


def _has_role(v: Variant, role: str) -> bool:
    return any(v.merged("resources", key) is not None for key in _LAYOUT_KEYS[role])


def drop_unused_modes(v: Variant, config_key: str) -> None:
    """Remove the per-mode backend keys of the layout this recipe does not run."""
    backend = v.doc.get("backend")
    if not isinstance(backend, dict):
        return
    agg = _has_role(v, "agg")
    disagg = _has_role(v, "prefill") or _has_role(v, "decode")
    if agg == disagg:
        return  # neither (nothing known) or both (the loader names that contradiction)
    unused = ("prefill", "decode") if agg else ("agg",)
    layout = "an aggregated recipe" if agg else "a disaggregated recipe"
    for role in unused:
        mode = _MODES[role]
        for key in (f"{mode}_environment", f"{mode}_extra_args"):
            if key in backend:
                pop_key(backend, key)
                v.note(f"removed backend.{key} ({layout} runs no {role} worker; v1 ignored it)")
        config = backend.get(config_key)
        if isinstance(config, dict) and mode in config:
            pop_key(config, mode)
            v.note(
                f"removed backend.{config_key}.{mode} ({layout} runs no {role} worker; "
                "v1 ignored it)"
            )
