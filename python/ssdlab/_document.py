"""The base of every results model: accepts and keeps fields it does not know, so a newer
core's results still load and round-trip unchanged."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow")
