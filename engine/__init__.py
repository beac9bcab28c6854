"""The async node engine, medical flow, retrieval, LLM access and Vietnamese text tools. No SQL, no Telegram."""
