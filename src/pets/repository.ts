import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { canExist } from '../db/ids.js';
import { pageOfRows } from '../db/keyset.js';
import type { PageRequest, Rows } from '../page.js';
import type { PetsTable } from '../db/schema.js';
import type { Pet } from './schemas.js';

export class PetsRepository {
  constructor(private readonly db: Db) {}

  async find(id: number): Promise<Pet | undefined> {
    if (!canExist(id)) return undefined;
    const row = await this.db.selectFrom('pets').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toPet(row);
  }

  /** The page's pets after the requested id, and whether more follow: the route makes the cursor. */
  async list(filter: { status?: Pet['status'] }, page: PageRequest): Promise<Rows<Pet>> {
    let query = this.db.selectFrom('pets').selectAll();
    if (filter.status) query = query.where('status', '=', filter.status);
    const { rows, more } = await pageOfRows(query, page);
    return { rows: rows.map(toPet), more };
  }
}

function toPet(row: Selectable<PetsTable>): Pet {
  return {
    id: row.id,
    name: row.name,
    category: { id: row.category_id, name: row.category_name },
    photos: (JSON.parse(row.photo_urls) as string[]).map((url) => ({ url })),
    tags: JSON.parse(row.tags) as Pet['tags'],
    status: row.status as Pet['status'],
  };
}
