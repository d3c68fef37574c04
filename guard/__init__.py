"""utilityguard runtime: confidence, calibration, the Guard, the decorator, the proxy, the CLI."""
