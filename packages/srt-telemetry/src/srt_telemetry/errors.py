"""The one exception family of srt-telemetry. Only the CLI maps these to exit codes and prints."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DashboardError",
    "ExporterError",
    "ParseError",
    "PowerError",
    "SourceUnavailableError",
    "StorageError",
    "TelemetryError",
]


class TelemetryError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code: int = 1


class ConfigError(TelemetryError):
    """A JSON config file is missing, unreadable or does not match its struct."""

    exit_code = 2


class ParseError(TelemetryError):
    """A Prometheus text body is malformed (message names the line number and the line)."""


class StorageError(TelemetryError):
    """A storage or local directory cannot be used (exists, not writable, ...)."""

    exit_code = 2


class PowerError(TelemetryError):
    """GPU power collection or finalization could not proceed."""


class SourceUnavailableError(TelemetryError):
    """No CPU power source (ACPI hwmon or DCGM) is usable on this node."""

    exit_code = 2


class ExporterError(TelemetryError):
    """The CPU power exporter cannot start (port in use, no source)."""

    exit_code = 2


class DashboardError(TelemetryError):
    """The run directory lacks what the dashboard needs, or an input is malformed."""
