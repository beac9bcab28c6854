"""Chat channels (Telegram, Zalo, console), rendering, and the `medbot` CLI."""
