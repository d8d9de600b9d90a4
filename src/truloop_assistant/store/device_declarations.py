"""The device tools each person's apps declared: one declaration per device, kept for 30 days
after that device last declared."""

from __future__ import annotations

import time
from typing import cast

from redis.asyncio import Redis

from ..protocol.declarations import Declaration, check_offered, load_declaration, merged
from . import keys
from .reads import Read


class ClientTools:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    async def get(self, user_id: str) -> Declaration | None:
        """What the person's turns are offered: the declarations of all their devices together."""
        return merged([declaration for _, declaration in await self._devices(user_id)])

    def read(self, user_id: str) -> Read[Declaration | None]:
        """:meth:`get` as a read to batch with others (lapsed declarations are left out, not removed)."""
        key = keys.client_tools(user_id)

        def decode(raw: dict[bytes, bytes]) -> Declaration | None:
            cutoff = time.time() - keys.CLIENT_TOOLS_TTL_S
            entries = sorted(_entry(value) for value in raw.values())
            return merged([declaration for at, declaration in entries if at > cutoff])

        return Read(lambda r: r.hgetall(key), decode)

    async def get_device(self, user_id: str, device_id: str | None) -> Declaration | None:
        """One device's declaration (``None``: the one made without a device id)."""
        raw = cast(bytes | None, await self.redis.hget(keys.client_tools(user_id), device_id or ""))
        if raw is None:
            return None
        at, declaration = _entry(raw)
        return declaration if at > time.time() - keys.CLIENT_TOOLS_TTL_S else None

    async def put(self, user_id: str, declaration: Declaration) -> None:
        """Replace the device's declaration (its 30 days start again); other devices' stay as they are.

        Beyond ``CLIENT_TOOLS_DEVICES_MAX`` devices, the one that declared longest ago is dropped.
        ``Unprocessable`` (and nothing written) when the devices kept would declare more together than
        a turn is offered (:func:`~..protocol.declarations.check_offered`).
        """
        key = keys.client_tools(user_id)
        device = declaration.device_id or ""
        others = [d for other, d in await self._devices(user_id) if other != device]
        kept = others[max(0, len(others) - (keys.CLIENT_TOOLS_DEVICES_MAX - 1)) :]  # the newest
        check_offered([*kept, declaration])
        raw = f"{time.time()!r}|{declaration.model_dump_json(exclude_none=True)}"
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, device, raw)
            pipe.expire(key, keys.CLIENT_TOOLS_TTL_S)
            await pipe.execute()
        devices = await self._devices(user_id)
        if len(devices) > keys.CLIENT_TOOLS_DEVICES_MAX:
            oldest = [device for device, _ in devices[: len(devices) - keys.CLIENT_TOOLS_DEVICES_MAX]]
            await self.redis.hdel(key, *oldest)

    async def delete(self, user_id: str, device_id: str | None) -> bool:
        """Drop one device's declaration; True when there was one."""
        return bool(await self.redis.hdel(keys.client_tools(user_id), device_id or ""))

    async def _devices(self, user_id: str) -> list[tuple[str, Declaration]]:
        """(device id, declaration) of the person's devices, oldest declaration first; lapsed ones go."""
        key = keys.client_tools(user_id)
        raw = cast(dict[bytes, bytes], await self.redis.hgetall(key))
        cutoff = time.time() - keys.CLIENT_TOOLS_TTL_S
        entries = sorted(
            ((_entry(value), device.decode()) for device, value in raw.items()), key=lambda e: e[0][0]
        )
        lapsed = [device for (at, _), device in entries if at <= cutoff]
        if lapsed:
            await self.redis.hdel(key, *lapsed)
        return [(device, declaration) for (at, declaration), device in entries if at > cutoff]


def _entry(raw: bytes) -> tuple[float, Declaration]:
    """When a stored declaration was made, and the declaration (parsed once per process)."""
    at, _, declaration = raw.partition(b"|")
    return float(at), load_declaration(declaration)
