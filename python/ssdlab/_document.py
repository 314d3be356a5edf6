"""The base of every results model: accepts and keeps fields it does not know, so a newer
core's results still load and round-trip unchanged."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Document(BaseModel):
    model_config = ConfigDict(extra="allow")

    def __dir__(self) -> list[str]:
        """What a notebook's tab completion should offer: the document's fields and the
        methods ssdlab defines, not pydantic's machinery (``model_*``, ``__fields__``...)."""
        names = set(type(self).model_fields) | set(self.model_extra or {})
        for cls in type(self).__mro__:
            if cls is BaseModel:
                break
            names |= {n for n in vars(cls) if not n.startswith(("_", "model"))}
        return sorted(names)
