"""Opening a site's store: a SQLite file by default, PostgreSQL by URL, migrated to this version's schema on open.

`plates watch --store`, the gateway's `--store` and `plates store` open it the same way. A database an older version
made is upgraded with Alembic's migrations (plates/store/migrations), in a transaction, never dropped or rewritten;
one that a newer version made is refused, since this one cannot know what its tables mean.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from plates.exceptions import SettingsError

MIGRATIONS = Path(__file__).with_name("migrations")
SCHEMES = ("sqlite", "postgresql")


def store_url(spec: str) -> str:
    """A file path as a SQLite URL; a URL as it is, if it names a database this store runs on."""
    if "://" not in spec:
        return f"sqlite:///{Path(spec).expanduser().resolve()}"
    try:
        url = make_url(spec)
    except ArgumentError as error:
        raise SettingsError(f"--store {spec!r}: not a database URL: {error}") from error
    if url.get_backend_name() not in SCHEMES:
        raise SettingsError(
            f"--store: {url.get_backend_name()!r} databases are not supported: give a file (SQLite) "
            "or a postgresql:// URL"
        )
    if url.get_backend_name() == "postgresql" and url.get_driver_name() in ("", "psycopg2"):
        url = url.set(drivername="postgresql+psycopg")  # psycopg 3, the driver plates installs
    return url.render_as_string(hide_password=False)


def _sqlite_settings(connection, record) -> None:
    # WAL: the page and `plates store` read while plates watch writes. A writer waits up to 5 s for another's lock
    # instead of failing at once. Foreign keys are off in SQLite unless asked for, per connection.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["engine"] = engine
    return config


class Store:
    """A site's database, open and at this version's schema. `session()` gives a transaction: committed at the
    end of its block, rolled back on an exception."""

    def __init__(self, spec: str, migrate: bool = True) -> None:
        self.url = store_url(spec)
        self.backend = make_url(self.url).get_backend_name()
        if self.backend == "sqlite":
            folder = Path(make_url(self.url).database or ".").parent
            if not folder.is_dir():
                raise SettingsError(f"--store {spec}: the folder {folder} does not exist")
        # pool_pre_ping: a connection PostgreSQL dropped (a restart) is replaced instead of failing a write.
        self.engine = create_engine(self.url, pool_pre_ping=True)
        if self.backend == "sqlite":
            event.listen(self.engine, "connect", _sqlite_settings)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        if migrate:
            self.migrate()

    def __repr__(self) -> str:
        return f"Store({make_url(self.url).render_as_string(hide_password=True)})"

    def where(self) -> str:
        """The database, with no password, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    def migrate(self) -> None:
        """Bring the database to this version's schema (creating it where empty)."""
        scripts = ScriptDirectory.from_config(_alembic_config(self.engine))
        try:
            with self.engine.connect() as connection:
                current = MigrationContext.configure(connection).get_current_revision()
        except OperationalError as error:
            raise SettingsError(f"store {self.where()}: cannot open it: {error.orig}") from error
        head = scripts.get_current_head()
        if current is not None and current not in {script.revision for script in scripts.walk_revisions()}:
            raise SettingsError(
                f"store {self.where()}: its schema ({current}) is from a newer plates than this one (up to {head}); "
                "upgrade plates"
            )
        if current != head:
            command.upgrade(_alembic_config(self.engine), "head")

    def revision(self) -> str | None:
        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._sessions.begin() as session:
            yield session

    def close(self) -> None:
        self.engine.dispose()
