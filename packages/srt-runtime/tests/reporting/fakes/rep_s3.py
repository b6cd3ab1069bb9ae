"""A real S3-compatible server (moto's standalone server) on 127.0.0.1 and a free port."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from moto.server import ThreadedMotoServer

KEY_ID = "AKIATESTTESTTEST"
REGION = "us-east-1"


@contextmanager
def running_s3() -> Iterator[str]:
    """Yields the endpoint URL of a fresh in-memory S3 server."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def client(endpoint: str, secret: str = "test-secret") -> Any:
    return boto3.session.Session(
        aws_access_key_id=KEY_ID, aws_secret_access_key=secret, region_name=REGION
    ).client("s3", endpoint_url=endpoint)


def new_bucket(endpoint: str) -> str:
    name = f"srt-{uuid.uuid4().hex[:12]}"
    client(endpoint).create_bucket(Bucket=name)
    return name


def keys(endpoint: str, bucket: str) -> list[str]:
    found: list[str] = []
    for page in client(endpoint).get_paginator("list_objects_v2").paginate(Bucket=bucket):
        found.extend(item["Key"] for item in page.get("Contents", ()))
    return sorted(found)
