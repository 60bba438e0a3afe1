#include "store/tables/wish_table.h"

namespace baton {

// h19-interchange:

Result<bool> InsertImportedWish(Txn& txn, const ImportedWish& w) {
  ASSIGN_OR_RETURN(int64_t n, txn.Exec("INSERT INTO wishes (project_key, slug, run_id, wish_file, "
                                       "signature, created_at) VALUES (?, ?, ?, ?, ?, ?) "
                                       "ON CONFLICT DO NOTHING",
                                       {SqlText(w.project_key), SqlText(w.slug), SqlText(w.run_id),
                                        w.wish_file ? SqlText(*w.wish_file) : SqlNull(),
                                        SqlText(w.signature), SqlText(w.created_at)}));
  return n != 0;
}

}  // namespace baton
