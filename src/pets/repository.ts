import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { canExist } from '../db/ids.js';
import type { PetsTable } from '../db/schema.js';
import { toPage, type PageRequest } from '../http/pagination.js';
import type { Pet } from './schemas.js';

export class PetsRepository {
  constructor(private readonly db: Db) {}

  async find(id: number): Promise<Pet | undefined> {
    if (!canExist(id)) return undefined;
    const row = await this.db.selectFrom('pets').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toPet(row);
  }

  async list(filter: { status?: Pet['status'] }, page: PageRequest) {
    let query = this.db.selectFrom('pets').selectAll().where('id', '>', page.afterId);
    if (filter.status) query = query.where('status', '=', filter.status);
    const rows = await query.orderBy('id').limit(page.limit + 1).execute();
    return toPage(rows.map(toPet), page.limit);
  }
}

function toPet(row: Selectable<PetsTable>): Pet {
  return {
    id: row.id,
    name: row.name,
    category: { id: row.category_id, name: row.category_name },
    photoUrls: JSON.parse(row.photo_urls) as string[],
    tags: JSON.parse(row.tags) as Pet['tags'],
    status: row.status as Pet['status'],
  };
}
