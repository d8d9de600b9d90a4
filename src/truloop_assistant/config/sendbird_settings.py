"""The Sendbird application's settings: enough for the admin command, which needs no Redis or JWT."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource

from .log_settings import LogSettings
from .secret import reveal
from .secret_files import SecretFiles


class SendbirdSettings(LogSettings):
    """The Sendbird application: enough for the admin command, which needs no Redis or JWT."""

    sendbird_app_id: str | None = None
    """Sendbird application id (required with the ``sendbird`` channel)."""
    sendbird_api_token: SecretStr | None = None
    """The master API token: it calls the Platform API and is the webhook HMAC key (required with
    ``sendbird``)."""
    sendbird_api_url: str | None = None
    """Platform API base URL override; unset: ``https://api-{app_id}.sendbird.com``."""
    sendbird_bot_user_id: str = "truloop-assistant"
    """The assistant's user id; its own messages are ignored."""
    sendbird_max_message_chars: int = Field(
        default=5000,
        ge=50,
        description="The Sendbird application's ``max_message_length`` (Sendbird's default is 5,000; "
        "at least 50): a longer text the assistant sends goes out as consecutive messages within it, "
        "cut at a paragraph, else a sentence, else a word, in order, each once (``doctor`` compares "
        "it with the application's).",
    )
    sendbird_channel_join_limit: int = Field(
        default=2000,
        ge=1,
        description="How many group channels Sendbird lets the bot user join (2,000 unless Sendbird "
        "raised it for your application): the bot joins every person's 1:1 channel, and past the limit "
        "no new one can be made. ``doctor`` shows how many it has joined beside it and warns past 80 %.",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The usual sources, and each secret's ``TRULOOP_X_FILE`` (unless the secret is passed in code)."""
        given = init_settings.init_kwargs if isinstance(init_settings, InitSettingsSource) else {}
        files = SecretFiles(settings_cls, given=given)
        return init_settings, files, env_settings, dotenv_settings, file_secret_settings

    @property
    def sendbird_base_url(self) -> str:
        """The Platform API base URL: the override, else the application's own host."""
        if self.sendbird_api_url:
            return self.sendbird_api_url.rstrip("/")
        return f"https://api-{self.sendbird_app_id}.sendbird.com"

    def missing_sendbird(self) -> list[str]:
        """The variables the Sendbird application needs that are not set."""
        return [
            name
            for name, value in (
                ("TRULOOP_SENDBIRD_APP_ID", self.sendbird_app_id),
                ("TRULOOP_SENDBIRD_API_TOKEN", reveal(self.sendbird_api_token)),
            )
            if not value
        ]
