"""What the assistant itself tells people about an event: invitations, reminders, changes and
cancellations.

Written by the server, not the model, in the person's language. Times read in one time zone, which
the text names: an invitee's own (from the directory); a guest's is not known, so the organizer's.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..backends.events import Event
from ..backends.users import UserProfile
from ..i18n import Language, texts
from ..i18n.dates import short_day


def as_language(value: str | None, default: Language) -> Language:
    """A stored language code as a :data:`Language`, or ``default`` when there is none."""
    if value == "ko":
        return "ko"
    if value == "en":
        return "en"
    return default


def zone_of(profile: UserProfile | None, default: ZoneInfo) -> ZoneInfo:
    """The person's time zone from their profile; ``default`` when unknown or invalid."""
    if profile is None or not profile.timezone:
        return default
    try:
        return ZoneInfo(profile.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        return default


def moment(at: datetime, zone: ZoneInfo, language: Language) -> str:
    """'11월 30일 (월) 18:00' / 'Mon 30 Nov 18:00' in ``zone``."""
    local = at.astimezone(zone)
    return f"{short_day(local, language)} {local:%H:%M}"


def event_time(event: Event, zone: ZoneInfo, language: Language) -> str:
    """'12월 2일 (수) 12:00–13:00 (Asia/Seoul)': the event's time in ``zone``, named."""
    start, end = event.start_time.astimezone(zone), event.end_time.astimezone(zone)
    until = f"–{end:%H:%M}" if end.date() == start.date() else f" – {moment(event.end_time, zone, language)}"
    return f"{moment(event.start_time, zone, language)}{until} ({zone.key})"


def _place_and_deadline(event: Event, language: Language, zone: ZoneInfo) -> tuple[str, str]:
    place = texts.INVITATION_PLACE(language, place=event.location) if event.location else ""
    deadline = ""
    if event.availability_deadline:
        deadline = texts.INVITATION_DEADLINE(
            language, deadline=moment(event.availability_deadline, zone, language)
        )
    return place, deadline


def invitation(event: Event, *, organizer: str, language: Language, zone: ZoneInfo) -> str:
    """An invitation: who invites them to what and when, and that they answer in this chat."""
    place, deadline = _place_and_deadline(event, language, zone)
    return texts.INVITATION(
        language,
        organizer=organizer,
        title=event.title,
        when=event_time(event, zone, language),
        place=place,
        deadline=deadline,
    )


def change_notice(event: Event, *, organizer: str, language: Language, zone: ZoneInfo) -> str:
    """Tells an invited person the event changed: what it is now, and that their answer may change."""
    place, deadline = _place_and_deadline(event, language, zone)
    return texts.EVENT_CHANGED(
        language,
        organizer=organizer,
        title=event.title,
        when=event_time(event, zone, language),
        place=place,
        deadline=deadline,
    )


def reminder(event: Event, *, organizer: str, language: Language, zone: ZoneInfo) -> str:
    """The one reminder of an invited person who has not given their availability (there is a deadline)."""
    assert event.availability_deadline is not None
    return texts.AVAILABILITY_REMINDER(
        language,
        organizer=organizer,
        title=event.title,
        when=event_time(event, zone, language),
        deadline=moment(event.availability_deadline, zone, language),
    )


def cancellation(event: Event, *, organizer: str, language: Language, zone: ZoneInfo) -> str:
    """Tells an invited person the event was cancelled, with the organizer's reason if they gave one."""
    reason = texts.CANCEL_REASON(language, reason=event.cancel_reason) if event.cancel_reason else ""
    when = event_time(event, zone, language)
    return texts.EVENT_CANCELLED(language, organizer=organizer, title=event.title, when=when, reason=reason)
