SELECT array_agg(id) AS ids, array_agg(payload) AS payloads FROM jobq_pop('bench', 100)
