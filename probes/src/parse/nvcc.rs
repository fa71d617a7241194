//! OWNER: toolkits helper. Stub until filled.
