"""The ``kb`` subcommands beyond ``index``: syncing Notion, measuring retrieval."""
