"""What every feature's SQL stands on: the engine, the schema, column types, values, checks, transactions."""
