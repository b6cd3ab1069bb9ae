"""nginx in front of several frontends (docs/planner.md#frontend-layout)."""

from __future__ import annotations

from collections.abc import Sequence

from srt_schema.recipe import FrontendConfig

__all__ = ["NGINX_CONFIG", "nginx_argv", "render_nginx_conf"]

NGINX_CONFIG = "nginx.conf"


def _header_var(header: str) -> str:
    return "$http_" + header.lower().replace("-", "_")


def render_nginx_conf(
    frontend: FrontendConfig,
    upstreams: Sequence[tuple[str, int]],
    *,
    listen: int,
    raise_ulimit: bool,
) -> str:
    """nginx.conf text: one upstream per frontend, keepalive pools, optional sticky sessions."""
    timeout = frontend.nginx_keepalive_timeout
    lines = ["worker_processes auto;"]
    if raise_ulimit:
        lines.append("worker_rlimit_nofile 1048576;")
    lines += [
        "",
        "events {",
        "    worker_connections 65535;",
        "    multi_accept on;",
        "    use epoll;",
        "}",
        "",
        "http {",
        "    client_max_body_size 45m;",
        "    access_log off;",
        f"    keepalive_timeout {timeout};",
    ]
    sticky = frontend.nginx_session_affinity
    if sticky:
        var = _header_var(frontend.nginx_session_affinity_header)
        lines += [
            "",
            f"    map {var} $frontend_hash_key {{",
            f"        default {var};",
            '        "" $request_id;',
            "    }",
        ]
    lines += ["", "    upstream backend_servers {"]
    if sticky:
        lines.append("        hash $frontend_hash_key consistent;")
    lines += [f"        server {host}:{port};" for host, port in upstreams]
    lines += [
        "        keepalive 512;",
        f"        keepalive_timeout {timeout};",
        "    }",
        "",
        "    server {",
        f"        listen {listen};",
        "        location / {",
        "            proxy_pass http://backend_servers;",
        "            proxy_buffering off;",
        "            proxy_read_timeout 24h;",
        "            proxy_send_timeout 24h;",
        "            proxy_http_version 1.1;",
        '            proxy_set_header Connection "";',
        "        }",
        "    }",
        "}",
        "",
    ]
    return "\n".join(lines)


def nginx_argv(config_path: str, *, raise_ulimit: bool) -> tuple[str, ...]:
    command = f"nginx -c {config_path} -g 'daemon off;'"
    if raise_ulimit:
        command = "ulimit -n 1048576 && " + command
    return ("bash", "-c", command)
