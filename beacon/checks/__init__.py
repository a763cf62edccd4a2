"""The 17 checks, one module per family: find, read, use. Each check reads a `Site` and returns a `Result`."""
