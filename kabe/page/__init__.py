"""The report page: the tables, the plots, the site, the project's page hooks."""
