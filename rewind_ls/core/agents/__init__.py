"""The agents rewind-ls records: the registry, the hook process and its shared steps, the hook
settings, doctor, and one subpackage per agent. Imports every core package below it."""
