"""Builders for DCGM exporter bodies in the exporter's own format (test data)."""

from __future__ import annotations


def dcgm_body(rows: list[tuple[str, str, str]], host: str = "n1") -> str:
    """rows = (gpu label, UUID label, value text) of DCGM_FI_DEV_POWER_USAGE samples."""
    lines = [
        "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).",
        "# TYPE DCGM_FI_DEV_POWER_USAGE gauge",
    ]
    for gpu, uuid, value in rows:
        lines.append(
            f'DCGM_FI_DEV_POWER_USAGE{{gpu="{gpu}",UUID="{uuid}",device="nvidia{gpu}",'
            f'modelName="NVIDIA GB200",Hostname="{host}"}} {value}'
        )
    return "\n".join(lines) + "\n"
