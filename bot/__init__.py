"""The applications: the composition root (``runtime``, ``wiring``), the chat channels (Telegram, Zalo,
console) on the channel-agnostic ``service``, the background worker (``worker``) and the ``medbot`` CLI.
Layout and rules: docs/architecture.md."""
