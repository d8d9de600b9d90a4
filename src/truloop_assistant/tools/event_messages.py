"""What the assistant itself tells people about an event: invitations, reminders, changes and
cancellations.

Written by the server, not the model, in the person's language. Times read in one time zone, which
the text names: an invitee's own (from the directory); a guest's is not known, so the organizer's.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import phonenumbers
from phonenumbers import timezone as number_zones

from ..backends.events import Event
from ..backends.users import UserProfile
from ..channels.sms_segments import excess
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


def event_time(
    event: Event, zone: ZoneInfo, language: Language, *, dash: str = "–", named: bool = True
) -> str:
    """'12월 2일 (수) 12:00–13:00 (Asia/Seoul)': the event's time in ``zone``, named (unless not
    ``named``)."""
    start, end = event.start_time.astimezone(zone), event.end_time.astimezone(zone)
    until = (
        f"{dash}{end:%H:%M}"
        if end.date() == start.date()
        else f" {dash} {moment(event.end_time, zone, language)}"
    )
    return f"{moment(event.start_time, zone, language)}{until}" + (f" ({zone.key})" if named else "")


def only_zone_of(number: str | None, zone: ZoneInfo) -> bool:
    """Whether ``zone`` is the one time zone of the country of ``number`` (E.164): then a time
    needs no zone named (``+8210…`` is in Asia/Seoul, a ``+1`` number could be in many)."""
    if number is None:
        return False
    try:
        zones = number_zones.time_zones_for_number(phonenumbers.parse(number))
    except phonenumbers.NumberParseException:
        return False
    return tuple(zones) == (zone.key,)


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


SMS_SEGMENTS = 3
"""The most SMS segments an invitation by text message takes (as carriers count them)."""
_SHORTEST = 8
"""A title or a name is cut to fit, never below this many characters."""


def sms_invitation(
    event: Event, *, organizer: str, language: Language, zone: ZoneInfo, number: str, link: str | None
) -> str:
    """An invitation by text message to ``number``: who invites them to what and when (the zone
    named unless it is the only one of their country), by when to answer, and the link to their
    guest page (without one, they answer by reply). To stay within :data:`SMS_SEGMENTS`, a long
    title is cut, then a long name, then the zone goes unnamed; plain ASCII around them, so an
    English one goes in GSM-7."""
    deadline = ""
    if event.availability_deadline:
        deadline = texts.SMS_DEADLINE(language, deadline=moment(event.availability_deadline, zone, language))
    if link:
        answer = texts.SMS_PICK(language, deadline=deadline, link=link)
    else:
        answer = texts.SMS_REPLY(language, deadline=deadline)

    def written(title: int, name: int, named: bool) -> str:
        """The text with the title and the name cut to so many characters."""
        when = event_time(event, zone, language, dash="-", named=named)
        cut_title, cut_name = _cut(event.title, title), _cut(organizer, name)
        return texts.SMS_INVITATION(language, organizer=cut_name, title=cut_title, when=when, answer=answer)

    title, name, named = len(event.title), len(organizer), not only_zone_of(number, zone)
    while (over := excess(written(title, name, named), SMS_SEGMENTS)) > 0:
        if title > _SHORTEST:
            title = max(_SHORTEST, title - over - 3)
        elif name > _SHORTEST:
            name = max(_SHORTEST, name - over - 3)
        elif named:
            named = False
        else:
            break  # a link too long to leave room: it goes as it is
    return written(title, name, named)


def _cut(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars].rstrip() + "..."


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
