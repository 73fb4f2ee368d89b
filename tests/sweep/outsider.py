"""A stranger's process: it tries to reach a Dask scheduler and, where it gets in, to run code on the
scheduler (run_on_scheduler) and on every worker (client.run), each writing a marker file.

    python outsider.py ADDRESS MARKER [CA CERT KEY]

Without certificates it tries three ways: the address as given (TLS with no certificate), plain TCP
to the same port, and TLS with a certificate of its own CA. It prints one JSON line: each attempt's
outcome ("ran" or the exception's type and message)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def attempt(address: str, marker: Path, security) -> str:
    from distributed import Client

    try:
        client = Client(address, security=security, timeout="4s")
    except Exception as e:  # noqa: BLE001 - the outcome is what is reported
        return f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    try:
        client.run_on_scheduler(lambda: Path(f"{marker}.scheduler").write_text("ran"))
        client.run(lambda: Path(f"{marker}.worker").write_text("ran"))
        return "ran"
    finally:
        client.close()


def main() -> None:
    from distributed.security import Security

    address, marker = sys.argv[1], Path(sys.argv[2])
    if len(sys.argv) == 6:
        ca, cert, key = sys.argv[3:6]
        own = Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, require_encryption=True)
        print(json.dumps({"with the certificates": attempt(address, marker, own)}))
        return
    tcp = "tcp://" + address.split("://", 1)[1]
    print(json.dumps({"no certificate": attempt(address, marker, None),
                      "plain tcp": attempt(tcp, marker, None),
                      "another CA": attempt(address, marker, Security.temporary())}))


if __name__ == "__main__":
    main()
