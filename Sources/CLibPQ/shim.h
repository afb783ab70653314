#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
#include <libpq-fe.h>

// The PG_DIAG_* field codes are macros of character constants that Swift does not import;
// these constants carry the same values under names Swift can see.
static const int CLIBPQ_DIAG_SEVERITY = 'S';
static const int CLIBPQ_DIAG_SQLSTATE = 'C';
static const int CLIBPQ_DIAG_MESSAGE_PRIMARY = 'M';
static const int CLIBPQ_DIAG_MESSAGE_DETAIL = 'D';
static const int CLIBPQ_DIAG_MESSAGE_HINT = 'H';
static const int CLIBPQ_DIAG_SCHEMA_NAME = 's';
static const int CLIBPQ_DIAG_TABLE_NAME = 't';
static const int CLIBPQ_DIAG_COLUMN_NAME = 'c';
static const int CLIBPQ_DIAG_CONSTRAINT_NAME = 'n';

#endif
