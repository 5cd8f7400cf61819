"""The pure gate engine: typed results and a contract in, a Decision out."""
