"""Reads, plates, their fuzzy keys and visits: the first schema.

Times are sa.DateTime(timezone=True) here, not plates.store.schema.UtcDateTime: a migration is frozen as it ran,
while the type that converts times may change.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plates",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("text", sa.String(length=12), nullable=False),
        sa.Column("label", sa.String(length=200), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("first_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("text"),
    )
    op.create_table(
        "plate_keys",
        sa.Column("key", sa.String(length=12), nullable=False),
        sa.Column("plate_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.ForeignKeyConstraint(["plate_id"], ["plates.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("key", "plate_id"),
    )
    with op.batch_alter_table("plate_keys", schema=None) as batch_op:
        batch_op.create_index("ix_plate_keys_plate_id", ["plate_id"], unique=False)

    op.create_table(
        "reads",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("camera_id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=500), nullable=False),
        sa.Column("track", sa.Integer(), nullable=True),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("text", sa.String(length=12), nullable=True),
        sa.Column("read_text", sa.String(length=12), nullable=True),
        sa.Column("text_score", sa.Float(), nullable=False),
        sa.Column("candidates", sa.JSON(), nullable=False),
        sa.Column("box", sa.JSON(), nullable=False),
        sa.Column("readings", sa.Integer(), nullable=False),
        sa.Column("motion", sa.String(length=8), nullable=True),
        sa.Column("direction", sa.String(length=8), nullable=True),
        sa.Column("crop", sa.String(length=300), nullable=True),
        sa.Column("plate_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.ForeignKeyConstraint(["plate_id"], ["plates.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("reads", schema=None) as batch_op:
        batch_op.create_index("ix_reads_camera_seen_at", ["camera_id", "seen_at"], unique=False)
        batch_op.create_index("ix_reads_plate_seen_at", ["plate_id", "seen_at"], unique=False)
        batch_op.create_index("ix_reads_seen_at", ["seen_at"], unique=False)

    op.create_table(
        "visits",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("plate_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("entry_read_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("exit_read_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("exited_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.String(length=8), nullable=False),
        sa.Column("overstay_alerted", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["entry_read_id"], ["reads.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["exit_read_id"], ["reads.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["plate_id"], ["plates.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("visits", schema=None) as batch_op:
        batch_op.create_index("ix_visits_entered_at", ["entered_at"], unique=False)
        batch_op.create_index("ix_visits_plate_entered_at", ["plate_id", "entered_at"], unique=False)
        batch_op.create_index("ix_visits_state_entered_at", ["state", "entered_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("visits", schema=None) as batch_op:
        batch_op.drop_index("ix_visits_state_entered_at")
        batch_op.drop_index("ix_visits_plate_entered_at")
        batch_op.drop_index("ix_visits_entered_at")

    op.drop_table("visits")
    with op.batch_alter_table("reads", schema=None) as batch_op:
        batch_op.drop_index("ix_reads_seen_at")
        batch_op.drop_index("ix_reads_plate_seen_at")
        batch_op.drop_index("ix_reads_camera_seen_at")

    op.drop_table("reads")
    with op.batch_alter_table("plate_keys", schema=None) as batch_op:
        batch_op.drop_index("ix_plate_keys_plate_id")

    op.drop_table("plate_keys")
    op.drop_table("plates")
