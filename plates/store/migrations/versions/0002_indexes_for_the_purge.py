"""Indexes for the purge: a read deleted sets its visits' references to null, which scanned every visit without
them; plates not seen within the retention are found by their last sighting.

Revision ID: 0002
Revises: 0001
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("plates", schema=None) as batch_op:
        batch_op.create_index("ix_plates_last_seen_at", ["last_seen_at"], unique=False)

    with op.batch_alter_table("visits", schema=None) as batch_op:
        batch_op.create_index("ix_visits_entry_read_id", ["entry_read_id"], unique=False)
        batch_op.create_index("ix_visits_exit_read_id", ["exit_read_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("visits", schema=None) as batch_op:
        batch_op.drop_index("ix_visits_exit_read_id")
        batch_op.drop_index("ix_visits_entry_read_id")

    with op.batch_alter_table("plates", schema=None) as batch_op:
        batch_op.drop_index("ix_plates_last_seen_at")
