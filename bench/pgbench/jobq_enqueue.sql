SELECT jobq_enqueue('bench', '{"to":"user@example.com","n":1}');
