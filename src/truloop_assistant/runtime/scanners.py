"""What every worker runs beside its jobs: expired calls end, unowned conversations drain, reminders
and the invitations their channel could not take yet go, and guests reached by phone leave events that
ended a while ago."""

from __future__ import annotations

from functools import partial
from zoneinfo import ZoneInfo

from ..services import Services
from ..store.pending_deliveries import PendingDeliveries
from .deliveries import PendingDeliveryScan
from .expiry import end_unhandled_due, expire_due
from .gauges import Gauges
from .phone_guests import forget_phone_guests_due
from .recovery import rescue_due
from .reminders import AvailabilityReminders
from .scanner import scan_forever


async def run_scanners(services: Services) -> None:
    """Run the worker's scans until cancelled (see :func:`scan_forever`). Every worker runs them all;
    each due item is claimed atomically, so one worker handles it."""
    reminders = AvailabilityReminders(
        services.redis, services.backends, services.inviter(), timezone=ZoneInfo(services.settings.timezone)
    )
    deliveries = PendingDeliveryScan(PendingDeliveries(services.redis), services.inviter())
    await scan_forever(
        {
            "expiry": partial(expire_due, services.store, services.intake),
            "unhandled": partial(end_unhandled_due, services.store, services.intake),
            "rescue": partial(rescue_due, services.drains, services.queue),
            "gauges": Gauges(services.redis, services.queue.queue).refresh,
            "reminders": reminders.send_due,
            "deliveries": deliveries.send_due,
            "phone-guests": partial(forget_phone_guests_due, services.redis, services.backends.events),
        }
    )
