"""The default user directory: profiles in one Redis hash (user id -> JSON), loaded from a users file."""

from __future__ import annotations

from redis.asyncio import Redis

from ...store import keys
from ...store.reads import Read
from .matching import match_users, phone_owners_among
from .port import SearchField, UserDirectoryError, UserProfile


class RedisUserDirectory:
    """Profiles in one Redis hash; search scans them (fine for directories of thousands)."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._key = keys.user_profiles()

    async def import_users(self, users: list[UserProfile]) -> int:
        """Insert or replace these profiles; return how many were written."""
        if not users:
            return 0
        ids = [user.user_id for user in users]
        existing = await self._redis.hmget(self._key, ids)
        new = len({i for i, raw in zip(ids, existing, strict=True) if raw is None})
        size = int(await self._redis.hlen(self._key))
        if size + new > keys.USERS_MAX:
            raise UserDirectoryError(
                f"the directory would hold {size + new} users, more than the limit of {keys.USERS_MAX}"
            )
        await self._redis.hset(self._key, mapping={u.user_id: u.model_dump_json() for u in users})
        return len({u.user_id for u in users})

    async def get_profile(self, user_id: str) -> UserProfile | None:
        """The stored profile, or None."""
        return await self.profile_read(user_id).once(self._redis)

    def profile_read(self, user_id: str) -> Read[UserProfile | None]:
        """:meth:`get_profile` as a read, to send with others in one round trip."""
        key = self._key
        return Read(lambda r: r.hget(key, user_id), _profile)

    async def search(
        self, query: str, *, by: SearchField | None = None, limit: int = 10
    ) -> list[UserProfile]:
        """See :func:`~.matching.match_users`."""
        raws = (await self._redis.hgetall(self._key)).values()
        users = [UserProfile.model_validate_json(raw) for raw in raws]
        return match_users(users, query, by=by, limit=limit)

    async def phone_owners(self, numbers: list[str], *, region: str) -> dict[str, list[str]]:
        """See :func:`~.matching.phone_owners_among` (one scan for all the numbers)."""
        if not numbers:
            return {}
        raws = (await self._redis.hgetall(self._key)).values()
        return phone_owners_among((UserProfile.model_validate_json(r) for r in raws), numbers, region=region)

    async def get_eids(self, user_ids: list[str]) -> dict[str, str | None]:
        """Known users' eids; unknown ids are left out."""
        if not user_ids:
            return {}
        raws = await self._redis.hmget(self._key, user_ids)
        return {
            user_id: UserProfile.model_validate_json(raw).eid
            for user_id, raw in zip(user_ids, raws, strict=True)
            if raw is not None
        }

    async def is_member(self, user_id: str) -> bool:
        """Whether a profile is stored for the user."""
        return bool(await self._redis.hexists(self._key, user_id))

    async def is_admin(self, user_id: str) -> bool:
        """Whether the stored profile has the admin role."""
        return await self.admin_read(user_id).once(self._redis)

    def admin_read(self, user_id: str) -> Read[bool]:
        """:meth:`is_admin` as a read."""
        key = self._key
        return Read(lambda r: r.hget(key, user_id), lambda raw: _is_admin(_profile(raw)))

    async def has_users(self) -> bool:
        """Whether any profile was imported."""
        return await self.has_users_read().once(self._redis)

    def has_users_read(self) -> Read[bool]:
        """:meth:`has_users` as a read."""
        key = self._key
        return Read(lambda r: r.hlen(key), bool)


def _profile(raw: bytes | None) -> UserProfile | None:
    return None if raw is None else UserProfile.model_validate_json(raw)


def _is_admin(profile: UserProfile | None) -> bool:
    return profile is not None and profile.role == "admin"
