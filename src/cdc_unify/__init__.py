"""cdc-unify: change-data-capture messages of many dialects -> one change model -> analytics tables."""
