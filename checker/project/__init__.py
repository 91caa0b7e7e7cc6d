"""What a project adds around one workflow: finding and reading files, configuration,
suppression comments, finalising a report, Agent Skills files."""
